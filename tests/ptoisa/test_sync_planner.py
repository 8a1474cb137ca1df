"""ptoisa.sync on its own: the flag-invariant check catches each way flags go wrong, and the planner
keeps the invariant on random abstract trees (no emulator, no compiler: the planner's contract)."""

from __future__ import annotations

from dataclasses import dataclass, field

from hypothesis import given, settings
from hypothesis import strategies as st

from ptoisa.machine import load_machine
from ptoisa.sync.insert import plan_function
from ptoisa.sync.model import OpInfo, SyncModel
from ptoisa.sync.plan import Oracle, Planner
from ptoisa.sync.verify import Barrier, Branch, Loop, SetWait, check, stream_from_plan

MACHINE = load_machine("a2a3")
PIPES = tuple(MACHINE.pipes)


def problems(stream: list) -> tuple[int, int]:
    p = check(stream, PIPES, name="f")
    return len(p.order), len(p.races)


def sw(kind: str, src: str, dst: str, k: int = 0) -> SetWait:
    return SetWait(kind, (src, dst, k), key=f"{kind}{src}{dst}{k}")


# ------------------------------------------------------------------ the check itself


def test_two_pairs_on_one_id_with_nothing_ordering_them_race():
    a = [sw("set", "MTE2", "V"), sw("wait", "MTE2", "V")]
    assert problems(a + a) == (0, 1)  # the second set may fire before the first wait consumed it
    b = [sw("set", "MTE2", "V", 1), sw("wait", "MTE2", "V", 1)]
    assert problems(a + b) == (0, 0)  # different ids: no reuse
    back = [sw("set", "V", "MTE2", 0), sw("wait", "V", "MTE2", 0)]  # V -> MTE2 orders the reuse
    assert problems(a + back + a) == (0, 0)
    assert problems(a + [Barrier("ALL")] + a) == (0, 0)


def test_a_set_in_one_arm_only_breaks_the_region_invariant():
    arm = [sw("set", "MTE2", "V")]
    assert problems([Branch([arm], exhaustive=False), sw("wait", "MTE2", "V")])[0] >= 1
    both = Branch([arm, [sw("set", "MTE2", "V")]], exhaustive=True)
    assert problems([both, sw("wait", "MTE2", "V")]) == (0, 0)


def test_loop_bodies_must_leave_flags_as_found():
    assert problems([Loop([sw("set", "MTE2", "V")])])[0] >= 1
    assert problems([sw("set", "V", "MTE2"), Loop([sw("wait", "V", "MTE2")])])[0] >= 1
    carried = [sw("set", "V", "MTE2"), Loop([sw("wait", "V", "MTE2"), Barrier("ALL"), sw("set", "V", "MTE2")]),
               sw("wait", "V", "MTE2")]
    assert problems(carried) == (0, 0)
    # without anything ordering the wait (MTE2) before the next set (V) the flag is reused early
    racy = [sw("set", "V", "MTE2"), Loop([sw("wait", "V", "MTE2"), sw("set", "V", "MTE2")]), sw("wait", "V", "MTE2")]
    assert problems(racy) == (0, 1)


def test_a_wait_with_no_set_is_reported():
    assert problems([sw("wait", "MTE2", "V")])[0] == 1
    assert problems([sw("set", "MTE2", "V")])[0] == 1  # still set at return


# ------------------------------------------------------------------ the planner on random trees


@dataclass(eq=False)
class Node:
    kind: str
    pipe: str = ""
    reads: frozenset = frozenset()
    writes: frozenset = frozenset()
    trips: int | None = None
    regions: list = field(default_factory=list)
    name: str = "node"


@dataclass(eq=False)
class Block:
    ops: list


class TreeModel(SyncModel):
    def __init__(self, body: Block) -> None:
        super().__init__(body, "f")
        for node in self.ops.values():
            self.info[id(node)] = OpInfo(node.kind, node.pipe)

    def conflict(self, p, c, varying) -> bool:
        return bool(p.writes & (c.reads | c.writes) or p.reads & c.writes)

    def trip_count(self, loop) -> int | None:
        return loop.trips


BUFFERS = st.frozensets(st.sampled_from("abcdef"), max_size=2)
ACCESS = st.builds(lambda pipe, r, w: Node("access", pipe, r, w),
                   st.sampled_from(("MTE1", "MTE2", "MTE3", "V", "M", "FIX", "S")), BUFFERS, BUFFERS)


def _structured(children):
    block = st.lists(children, min_size=1, max_size=4).map(Block)
    return st.one_of(
        st.builds(lambda b, n: Node("for", trips=n, regions=[b]), block, st.one_of(st.none(), st.integers(0, 3))),
        st.builds(lambda arms: Node("if", regions=arms), st.lists(block, min_size=1, max_size=2)),
        st.builds(lambda c, b: Node("while", regions=[c, b]), block, block),
    )


TREES = st.lists(st.recursive(ACCESS, _structured, max_leaves=8), min_size=1, max_size=4).map(Block)


@settings(max_examples=200)
@given(TREES)
def test_planned_trees_keep_the_invariant_and_order_every_hazard(body):
    model = TreeModel(body)
    plan = plan_function(model, MACHINE).plan
    assert check(stream_from_plan(model, plan), PIPES, name="f") == check([], PIPES)  # no problem at all
    planner = Planner(model, MACHINE)
    planner.plan = plan
    assert Oracle(planner).run() is None  # the planner's own walk finds no unordered hazard
