"""The flag invariant of inserted sync, checked on every path.

Binary flags go wrong in two ways, and :func:`check` finds both on every path of a structured
function (both arms of every ``if``, loops run zero to three times or their known count, ``while``):

* **program order** - a set of a flag that is already set, a wait of a flag that is not set, a flag
  still set where the function returns, or a region (loop body, if arm) that leaves a flag in a
  different state than it found it. The planner keeps the region invariant *by construction*: every
  pair's set and wait are ops of one region (a loop-carried pair: one wait and one set in the body
  plus a set before and a wait after the loop), so every path through every region leaves every flag
  as it found it; this check is the proof that it did.
* **time** - a set that may *fire* before the previous wait of the same flag has consumed it. A set
  runs on its source pipe and a wait on its destination pipe, so program order does not order them:
  the earlier wait must happen-before the later set (through flags, barriers or in-order queues).
  Otherwise the flag is set twice (one signal is lost) and a later wait deadlocks - and whether it
  does can depend on the scalar arguments (an ``if`` taken on some iterations only).

Happens-before is tracked with vector clocks: ``vc[Q][P] = s`` means every P instruction numbered
``<= s`` completes before Q's next instruction starts. Paths are followed separately (one state per
path) so that what one path knows never stands in for another; past :data:`MAX_PATHS` they are
merged, which is conservative (it can only report more).

The input is a *sync stream*: the function reduced to its sync ops and structure, built from a plan
(:func:`stream_from_plan`) or from text that carries sync ops (:func:`ptoisa.sync.pto.stream`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ptoisa.sync.model import SyncModel
from ptoisa.sync.plan import Item, Plan

LOOP_COPIES = 3
MAX_PATHS = 32
Flag = tuple[str, str, int]


@dataclass(slots=True)
class SetWait:
    kind: str  # "set" | "wait"
    flag: Flag
    key: Any = None  # what a race report names (a plan item, an AST op)
    where: str = ""
    own: bool = True  # False: sync the author wrote, kept as is (its own errors are not ours)


@dataclass(slots=True)
class Barrier:
    pipe: str  # "ALL" = every pipe


@dataclass(slots=True)
class Call:
    callee: str
    where: str = ""


@dataclass(slots=True)
class Loop:
    body: list
    trips: int | None = None
    where: str = ""


@dataclass(slots=True)
class Branch:
    arms: list[list]
    exhaustive: bool = False  # has an else arm
    where: str = ""


@dataclass(slots=True)
class While:
    cond: list
    body: list
    where: str = ""


@dataclass
class FlagProblems:
    """Program-order errors (text) and timing races ``(key of the earlier wait, key of the set)``."""

    order: list[str] = field(default_factory=list)
    races: list[tuple[Any, Any]] = field(default_factory=list)


class _State:
    __slots__ = ("last_wait", "set_flags", "vc")

    def __init__(self, pipes: tuple[str, ...]) -> None:
        self.vc: dict[str, dict[str, int]] = {p: {} for p in pipes}
        self.set_flags: dict[Flag, int] = {}  # flag -> seq of its set (key of the snapshot it carries)
        self.last_wait: dict[Flag, set[tuple[int, int]]] = {}  # flag -> {(seq, index of wait key)}

    def copy(self) -> _State:
        s = _State(())
        s.vc = {p: dict(v) for p, v in self.vc.items()}
        s.set_flags = dict(self.set_flags)
        s.last_wait = {k: set(v) for k, v in self.last_wait.items()}
        return s


class _Checker:
    def __init__(self, pipes: tuple[str, ...], callee_flags: dict[str, set[Flag]]) -> None:
        self.pipes = pipes
        self.callee_flags = callee_flags
        self.counter = 0
        self.snaps: dict[int, dict[str, int]] = {}  # set seq -> the clock it hands to its waiter
        self.keys: list[Any] = []
        self.problems = FlagProblems()
        self._seen: set = set()

    def error(self, text: str) -> None:
        if text not in self._seen:
            self._seen.add(text)
            self.problems.order.append(text)

    # ------------------------------------------------------------------ sync ops

    def set_flag(self, op: SetWait, st: _State) -> None:
        src, dst = op.flag[0], op.flag[1]
        if op.flag in st.set_flags and op.own:
            self.error(f"{op.where}: set of {op.flag} while it is already set")
        for seq, k in st.last_wait.get(op.flag, ()) if op.own else ():
            race = ("race", id(self.keys[k]), id(op))  # once per (wait, set) written, not per path
            if st.vc[src].get(dst, 0) < seq and race not in self._seen:
                self._seen.add(race)
                self.problems.races.append((self.keys[k], op.key))
        self.counter += 1
        snap = dict(st.vc[src])
        snap[src] = self.counter
        self.snaps[self.counter] = snap
        st.set_flags[op.flag] = self.counter

    def wait_flag(self, op: SetWait, st: _State) -> None:
        dst = op.flag[1]
        seq = st.set_flags.pop(op.flag, None)
        if seq is None and op.own:
            self.error(f"{op.where}: wait of {op.flag} with no set before it on some path (deadlock)")
        self.counter += 1
        snap = self.snaps.get(seq, {}) if seq is not None else {}
        for q in self.pipes if dst == "S" else (dst,):  # a scalar wait holds back all later issue
            vc = st.vc[q]
            for k, v in snap.items():
                if v > vc.get(k, 0):
                    vc[k] = v
            vc[dst] = max(vc.get(dst, 0), self.counter)
        self.keys.append(op.key)
        st.last_wait[op.flag] = {(self.counter, len(self.keys) - 1)}

    def barrier(self, op: Barrier, st: _State) -> None:
        self.counter += 1
        if op.pipe == "ALL":
            for p in self.pipes:
                st.vc[p] = dict.fromkeys(self.pipes, self.counter)
        elif op.pipe in st.vc:
            st.vc[op.pipe][op.pipe] = self.counter

    def call(self, op: Call, st: _State) -> None:
        clash = set(st.set_flags) & self.callee_flags.get(op.callee, set())
        if clash:
            self.error(f"{op.where}: the callee @{op.callee} uses flags {sorted(clash)} the caller holds set")

    # ------------------------------------------------------------------ structure

    def merge(self, states: list[_State]) -> _State:
        out = _State(())
        out.vc = {p: {} for p in self.pipes}
        for p in self.pipes:
            keys = set().union(*(s.vc[p].keys() for s in states))
            out.vc[p] = {k: min(s.vc[p].get(k, 0) for s in states) for k in keys}
        common = set(states[0].set_flags).intersection(*(s.set_flags.keys() for s in states[1:]))
        for f in common:
            seqs = {s.set_flags[f] for s in states}
            if len(seqs) > 1:  # set on different paths: the waiter relies on what all of them knew
                self.counter += 1
                snaps = [self.snaps[q] for q in seqs]
                self.snaps[self.counter] = {k: min(x.get(k, 0) for x in snaps) for k in set().union(*snaps)}
            out.set_flags[f] = self.counter if len(seqs) > 1 else seqs.pop()
        for s in states:  # a wait already ordered before its flag's next set on its own path stays so
            for f, waits in s.last_wait.items():
                known = s.vc[f[0]].get(f[1], 0)
                out.last_wait.setdefault(f, set()).update(w for w in waits if w[0] > known)
        return out

    def join(self, states: list[_State], where: str) -> list[_State]:
        keys = {frozenset(s.set_flags) for s in states}
        if len(keys) > 1:
            diff = sorted(frozenset.union(*keys) - frozenset.intersection(*keys))
            self.error(f"{where}: paths leave flags {diff} in different states")
        return [self.merge(states)] if len(states) > MAX_PATHS else states

    def run(self, stream: list, states: list[_State]) -> list[_State]:
        for op in stream:
            if isinstance(op, SetWait):
                step = self.set_flag if op.kind == "set" else self.wait_flag
                for st in states:
                    step(op, st)
            elif isinstance(op, Barrier):
                for st in states:
                    self.barrier(op, st)
            elif isinstance(op, Call):
                for st in states:
                    self.call(op, st)
            elif isinstance(op, Loop):
                states = self.loop(op, states)
            elif isinstance(op, Branch):
                outs = [] if op.exhaustive else list(states)
                for arm in op.arms:
                    outs += self.run(arm, [st.copy() for st in states])
                states = self.join(outs, op.where)
            elif isinstance(op, While):
                states = self.while_loop(op, states)
            else:
                states = self.run(op, states)
        return states

    def loop(self, op: Loop, states: list[_State]) -> list[_State]:
        entry = frozenset(states[0].set_flags) if states else frozenset()
        copies = LOOP_COPIES if op.trips is None else min(op.trips, LOOP_COPIES)
        outs = list(states) if not op.trips else []  # zero trips are a path unless the count is known
        cur = states
        for k in range(copies):
            cur = self.run(op.body, [st.copy() for st in cur])
            if any(frozenset(st.set_flags) != entry for st in cur):
                self.error(f"{op.where}: the loop body leaves flags in another state than it found them")
                return cur
            if op.trips is None or k == copies - 1:
                outs += cur
        return self.join(outs, op.where)

    def while_loop(self, op: While, states: list[_State]) -> list[_State]:
        outs: list[_State] = []
        cur = states
        for _ in range(LOOP_COPIES):
            cur = self.run(op.cond, [st.copy() for st in cur])
            outs += cur
            cur = self.run(op.body, [st.copy() for st in cur])
        return self.join(outs, op.where)


def check(stream: list, pipes: tuple[str, ...], callee_flags: dict[str, set[Flag]] | None = None,
          name: str = "") -> FlagProblems:
    """Check the flag invariant of one function's sync stream (see the module docstring).
    ``callee_flags``: the flags each callee uses (its own callees' included), which must not be set in
    the caller across the call."""
    ch = _Checker(pipes, callee_flags or {})
    for end in ch.run(stream, [_State(pipes)]):
        if end.set_flags:
            ch.error(f"@{name} returns with flags {sorted(end.set_flags)} still set")
    return ch.problems


def used_flags(stream: list) -> set[Flag]:
    """Every flag a set or wait of ``stream`` names (not following calls)."""
    out: set[Flag] = set()
    for op in stream:
        if isinstance(op, SetWait):
            out.add(op.flag)
        elif isinstance(op, Loop):
            out |= used_flags(op.body)
        elif isinstance(op, Branch):
            for arm in op.arms:
                out |= used_flags(arm)
        elif isinstance(op, While):
            out |= used_flags(op.cond) | used_flags(op.body)
        elif isinstance(op, list):
            out |= used_flags(op)
    return out


def stream_from_plan(model: SyncModel, plan: Plan) -> list:
    """The sync stream of ``model``'s function with ``plan`` applied (ids from ``plan.ids``); race
    reports name the plan's :class:`~ptoisa.sync.plan.Item` objects."""

    def items(lst: list[Item] | None, out: list) -> None:
        for it in lst or ():
            if it.kind == "barrier":
                out.append(Barrier(it.src))
                continue
            if it.fence:
                out.append(Barrier("ALL"))
            out.append(SetWait(it.kind, (it.src, it.dst, plan.ids.get(it.pair, 0)), it))

    def where(op: Any) -> str:
        loc = model.loc(op)
        return f"{loc}" if loc is not None else getattr(op, "name", "")

    def user(op: Any, out: list) -> None:
        kind, src, dst, event = model.user_sync(op)
        if kind == "barrier":
            out.append(Barrier(src))
        else:
            out.append(SetWait(kind, (src, dst, event), None, where(op), own=False))

    def region(r: Any) -> list:
        out: list = []
        items(plan.region_start.get(id(r)), out)
        for op in r.ops:
            items(plan.before.get(id(op)), out)
            info = model.info[id(op)]
            if info.kind == "sync":
                user(op, out)
            elif info.kind == "for":
                out.append(Loop(region(op.regions[0]), model.trip_count(op), where(op)))
            elif info.kind == "if":
                out.append(Branch([region(x) for x in op.regions], len(op.regions) > 1, where(op)))
            elif info.kind == "while" and len(op.regions) == 2:
                out.append(While(region(op.regions[0]), region(op.regions[1]), where(op)))
            else:
                callee = model.callee(op) if info.kind == "fence" else None
                if callee is not None:
                    out.append(Call(callee, where(op)))
                out.extend(region(x) for x in op.regions)
            items(plan.after.get(id(op)), out)
        return out

    return region(model.body)
