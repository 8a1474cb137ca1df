"""Turning a :class:`~pyptoemu.check.syncpass.plan.Plan` into AST, and allocating event ids.

Event ids are allocated after the ops are laid out: every pair's lifetime is the interval between
its first and last op in a pre-order walk of the new function (a carried pair spans its whole loop
nest). Because each pair's set and waits sit in one block (or around one loop), any other op that
runs between them dynamically lies inside that interval, so pairs on the same pipe pair whose
intervals do not intersect may share an id. Greedy colouring by interval start uses the minimum
number of ids; needing more than the machine has is an error at the consumer that needed it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ptoisa.text import ast as A
from pyptoemu.check.syncpass.model import INTRA_SYNC_OPS
from pyptoemu.check.syncpass.plan import Item, Plan
from pyptoemu.errors import InputError, Loc


def strip_region(region: A.Region) -> A.Region:
    """A copy of ``region`` without intra-core sync ops (ops with regions are copied, others shared)."""
    ops = []
    for op in region.ops:
        if op.name in INTRA_SYNC_OPS:
            continue
        ops.append(replace(op, regions=[strip_region(r) for r in op.regions]) if op.regions else op)
    return A.Region(args=list(region.args), arg_types=list(region.arg_types), ops=ops)


def _pipe(p: str) -> A.EnumAttr:
    return A.EnumAttr("pipe", f"PIPE_{p}")


@dataclass(slots=True)
class Emitted:
    fn: A.Function
    pair_ops: dict[int, list[A.Op]] = field(default_factory=dict)
    pair_pos: dict[int, list[int]] = field(default_factory=dict)
    calls: list[tuple[int, str]] = field(default_factory=list)  # (position, callee) of fenced calls
    item_of: dict[int, Item] = field(default_factory=dict)  # id(emitted set/wait op) -> its plan item
    pair_of: dict[int, int] = field(default_factory=dict)  # id(emitted set/wait op) -> pair id
    forced: set[int] = field(default_factory=set)  # pairs whose id ignores an ``apart`` constraint


def materialise(fn: A.Function, plan: Plan, fenced_calls: set[str]) -> Emitted:
    """The function with the plan's sync ops inserted (event ids still unassigned)."""
    out = Emitted(fn)
    pos = [0]

    def make(items: list[Item] | None, loc: Loc) -> list[A.Op]:
        ops = []
        for it in items or ():
            pos[0] += 1
            if it.kind == "barrier":
                ops.append(A.Op("pto.barrier", loc, attrs={"pipe": _pipe(it.src)}))
                continue
            if it.fence:
                ops.append(A.Op("pto.barrier", loc, attrs={"pipe": _pipe("ALL")}))
            name = "pto.set_flag" if it.kind == "set" else "pto.wait_flag"
            op = A.Op(name, loc, attrs={"args": [_pipe(it.src), _pipe(it.dst), A.EnumAttr("event", "EVENT_ID0")]})
            ops.append(op)
            out.item_of[id(op)] = it
            out.pair_of[id(op)] = it.pair
            out.pair_ops.setdefault(it.pair, []).append(op)
            out.pair_pos.setdefault(it.pair, []).append(pos[0])
        return ops

    def region(r: A.Region, owner_loc: Loc) -> A.Region:
        first_loc = r.ops[0].loc if r.ops else owner_loc
        ops = make(plan.region_start.get(id(r)), first_loc)
        for op in r.ops:
            if op.name in INTRA_SYNC_OPS:
                continue
            ops += make(plan.before.get(id(op)), op.loc)
            pos[0] += 1
            if op.name == "func.call" and str(op.attrs.get("callee", "")) in fenced_calls:
                out.calls.append((pos[0], str(op.attrs.get("callee"))))
            ops.append(replace(op, regions=[region(x, op.loc) for x in op.regions]) if op.regions else op)
            ops += make(plan.after.get(id(op)), op.loc)
        return A.Region(args=list(r.args), arg_types=list(r.arg_types), ops=ops)

    out.fn = replace(fn, body=region(fn.body, fn.loc))
    return out


def allocate_events(em: Emitted, plan: Plan, limit: int,
                    callee_ids: dict[str, set[tuple[str, str, int]]],
                    apart: set[frozenset[int]] | None = None) -> set[tuple[str, str, int]]:
    """Assign ``EVENT_IDk`` to every pair; returns the (src, dst, id) triples used (callees'
    included, so that a caller never holds an id its callee sets). ``apart``: pairs of pairs that
    should not share an id although their intervals are disjoint (the later set could fire before
    the earlier wait consumed the flag); where no id is left for that, the pair gets a shared id
    and is noted in ``em.forced``."""
    apart = apart or set()
    colour: dict[int, int] = {}
    used: set[tuple[str, str, int]] = set()
    by_pipes: dict[tuple[str, str], list[tuple[int, int, int]]] = {}
    for pair in plan.pairs:
        positions = em.pair_pos.get(pair.pid)
        if not positions:
            continue
        by_pipes.setdefault((pair.src, pair.dst), []).append((min(positions), max(positions), pair.pid))
    reserved: dict[tuple[str, str], list[tuple[int, int]]] = {}
    for at, callee in em.calls:
        for src, dst, k in callee_ids.get(callee, set()):
            reserved.setdefault((src, dst), []).append((at, k))
            used.add((src, dst, k))
    for pipes, intervals in by_pipes.items():
        intervals.sort()
        active: list[tuple[int, int]] = []  # (end, id)
        for start, end, pid in intervals:
            active = [(e, k) for e, k in active if e >= start]
            taken = {k for _, k in active}
            taken |= {k for at, k in reserved.get(pipes, ()) if start <= at <= end}
            avoid = {colour[q] for q in colour if frozenset((pid, q)) in apart}
            k = next((i for i in range(limit) if i not in taken and i not in avoid), None)
            if k is None:
                k = next((i for i in range(limit) if i not in taken), None)
                if k is not None:
                    em.forced.add(pid)
            if k is None:
                pair = plan.pairs[pid]
                raise InputError(
                    f"automatic synchronisation needs more than {limit} event ids live at once on "
                    f"PIPE_{pipes[0]} -> PIPE_{pipes[1]} (the machine has {limit}); this hazard from "
                    f"{pair.producer.name} ({pair.producer.loc}) would need another one - split the work "
                    f"or synchronise by hand (--sync asis)", pair.consumer.loc)
            active.append((end, k))
            colour[pid] = k
            used.add((pipes[0], pipes[1], k))
            for op in em.pair_ops[pid]:
                args = list(op.attrs["args"])
                args[2] = A.EnumAttr("event", f"EVENT_ID{k}")
                op.attrs["args"] = args
    return used
