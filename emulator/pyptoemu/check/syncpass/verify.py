"""The flag invariant of inserted sync, checked on the emitted function (ids assigned).

Binary flags go wrong in two ways, and this module finds both on every path of a structured
function (both arms of every ``scf.if``, loops run zero to three times, ``scf.while``):

* **program order** - a ``set_flag`` of a flag that is already set, a ``wait_flag`` of a flag that is
  not set, a flag still set where the function returns, or a region (loop body, if arm) that leaves
  a flag in a different state than it found it. The planner keeps the region invariant *by
  construction*: every pair's set and wait are ops of one region (a loop-carried pair: one wait and
  one set in the body plus a set before and a wait after the loop), so every path through every
  region leaves every flag as it found it; this check is the proof that it did.
* **time** - a set that may *fire* before the previous wait of the same flag has consumed it. A set
  runs on its source pipe and a wait on its destination pipe, so program order does not order them:
  the earlier wait must happen-before the later set (through flags, barriers or in-order queues).
  Otherwise the flag is set twice (one signal is lost) and a later wait deadlocks - whether it
  does can depend on the scalar arguments (an ``scf.if`` taken on some iterations only).

Happens-before is tracked with the same vector clocks as the planner: ``vc[Q][P] = s`` means every
P instruction numbered ``<= s`` completes before Q's next instruction starts.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ptoisa.text import ast as A

PIPES = ("S", "MTE1", "MTE2", "MTE3", "V", "M", "FIX")
LOOP_COPIES = 3
MAX_PATHS = 32


@dataclass
class FlagProblems:
    """What :func:`check_flags` found: program-order errors (text) and timing races
    ``(earlier wait op, later set op)`` on one flag."""

    order: list[str] = field(default_factory=list)
    races: list[tuple[A.Op, A.Op]] = field(default_factory=list)


def flag_of(op: A.Op) -> tuple[str, str, str]:
    a = op.attrs["args"]
    return (str(a[0].value)[5:], str(a[1].value)[5:], str(a[2].value))


def _barrier_pipe(op: A.Op) -> str:
    attr = op.attrs.get("pipe")
    if attr is None and op.attrs.get("args"):
        attr = op.attrs["args"][0]
    return str(getattr(attr, "value", "PIPE_ALL"))[5:]


class _State:
    __slots__ = ("last_wait", "set_flags", "vc")

    def __init__(self) -> None:
        self.vc: dict[str, dict[str, int]] = {p: {} for p in PIPES}
        self.set_flags: dict[tuple, int] = {}  # flag -> seq of the set (snapshot key)
        self.last_wait: dict[tuple, set[tuple[int, int]]] = {}  # flag -> {(seq, id(wait op))}

    def copy(self) -> _State:
        s = _State()
        s.vc = {p: dict(v) for p, v in self.vc.items()}
        s.set_flags = dict(self.set_flags)
        s.last_wait = {k: set(v) for k, v in self.last_wait.items()}
        return s


class _Checker:
    def __init__(self, fn: A.Function, callee_flags: dict[str, set[tuple]]) -> None:
        self.fn = fn
        self.callee_flags = callee_flags
        self.counter = 0
        self.snaps: dict[int, dict[str, int]] = {}  # set seq -> clock it hands to the waiter
        self.ops: dict[int, A.Op] = {}
        self.problems = FlagProblems()
        self._seen_races: set[tuple[int, int]] = set()
        self._seen_order: set[str] = set()
        self.consts: dict[str, int] = {}
        self._constants(fn.body)

    def _constants(self, region: A.Region) -> None:
        for op in region.ops:
            val = op.attrs.get("value")
            if op.name == "arith.constant" and isinstance(val, int) and not isinstance(val, bool) and op.results:
                self.consts[op.results[0]] = val
            for r in op.regions:
                self._constants(r)

    def error(self, text: str) -> None:
        if text not in self._seen_order:
            self._seen_order.add(text)
            self.problems.order.append(text)

    def merge(self, states: list[_State], where: A.Op) -> _State:
        if len(states) == 1:
            return states[0]
        first = states[0]
        for s in states[1:]:
            if set(s.set_flags) != set(first.set_flags):
                diff = sorted(set(s.set_flags) ^ set(first.set_flags))
                self.error(f"{where.loc}: paths through {where.name} leave flags {diff} in different states")
        out = _State()
        for p in PIPES:
            keys = set().union(*(s.vc[p].keys() for s in states))
            out.vc[p] = {k: min(s.vc[p].get(k, 0) for s in states) for k in keys}
        common = set(first.set_flags).intersection(*(s.set_flags.keys() for s in states[1:]))
        for f in common:
            seqs = {s.set_flags[f] for s in states}
            if len(seqs) == 1:
                out.set_flags[f] = seqs.pop()
                continue
            # set on different paths: the waiter may only rely on what every one of them knew
            self.counter += 1
            snaps = [self.snaps[q] for q in seqs]
            keys = set().union(*snaps)
            self.snaps[self.counter] = {k: min(x.get(k, 0) for x in snaps) for k in keys}
            out.set_flags[f] = self.counter
        for s in states:  # a wait already ordered before its flag's next set on its own path stays so
            for f, waits in s.last_wait.items():
                known = s.vc[f[0]].get(f[1], 0)
                out.last_wait.setdefault(f, set()).update(w for w in waits if w[0] > known)
        return out

    # ------------------------------------------------------------------ sync ops

    def set_flag(self, op: A.Op, st: _State) -> None:
        flag = flag_of(op)
        src, dst = flag[0], flag[1]
        if flag in st.set_flags:
            self.error(f"{op.loc}: set_flag {flag} while it is already set")
        for seq, wid in st.last_wait.get(flag, ()):
            if st.vc[src].get(dst, 0) < seq and (wid, id(op)) not in self._seen_races:
                self._seen_races.add((wid, id(op)))
                self.problems.races.append((self.ops[wid], op))
        self.counter += 1
        snap = dict(st.vc[src])
        snap[src] = self.counter
        self.snaps[self.counter] = snap
        st.set_flags[flag] = self.counter

    def wait_flag(self, op: A.Op, st: _State) -> None:
        flag = flag_of(op)
        dst = flag[1]
        seq = st.set_flags.pop(flag, None)
        if seq is None:
            self.error(f"{op.loc}: wait_flag {flag} with no set before it on some path (deadlock)")
        self.counter += 1
        targets = PIPES if dst == "S" else (dst,)  # a scalar wait holds back everything issued after it
        for q in targets:
            vc = st.vc[q]
            for k, v in self.snaps.get(seq, {}).items() if seq is not None else ():
                if v > vc.get(k, 0):
                    vc[k] = v
            vc[dst] = max(vc.get(dst, 0), self.counter)
        self.ops[id(op)] = op
        st.last_wait[flag] = {(self.counter, id(op))}

    def barrier(self, op: A.Op, st: _State) -> None:
        pipe = _barrier_pipe(op)
        self.counter += 1
        if pipe == "ALL":
            for p in PIPES:
                st.vc[p] = dict.fromkeys(PIPES, self.counter)
        elif pipe in st.vc:
            st.vc[pipe][pipe] = self.counter

    # ------------------------------------------------------------------ structure
    # Paths are followed separately (a list of states, one per path) so that what one path knows
    # never stands in for another; past MAX_PATHS they are merged, which is conservative.

    def join(self, states: list[_State], where: A.Op) -> list[_State]:
        keys = {frozenset(s.set_flags) for s in states}
        if len(keys) > 1:
            diff = sorted(frozenset.union(*keys) - frozenset.intersection(*keys))
            self.error(f"{where.loc}: paths through {where.name} leave flags {diff} in different states")
        if len(states) > MAX_PATHS:
            return [self.merge(states, where)]
        return states

    def region(self, region: A.Region, states: list[_State]) -> list[_State]:
        for op in region.ops:
            name = op.name
            if name in ("pto.set_flag", "pto.wait_flag", "pto.barrier", "func.call"):
                step = {"pto.set_flag": self.set_flag, "pto.wait_flag": self.wait_flag,
                        "pto.barrier": self.barrier, "func.call": self.call}[name]
                for st in states:
                    step(op, st)
            elif name == "scf.for":
                states = self.loop(op, states)
            elif name == "scf.if":
                outs = [] if len(op.regions) == 2 else list(states)
                for r in op.regions:
                    outs += self.region(r, [st.copy() for st in states])
                states = self.join(outs, op)
            elif name == "scf.while" and len(op.regions) == 2:
                states = self.while_loop(op, states)
            else:
                for r in op.regions:
                    states = self.region(r, states)
        return states

    def trip_count(self, op: A.Op) -> int | None:
        lb, ub, step = (self.consts.get(x) if isinstance(x, str) else x for x in op.operands[:3])
        if not all(isinstance(v, int) for v in (lb, ub, step)) or step <= 0:
            return None
        return max(0, -(-(ub - lb) // step))

    def loop(self, op: A.Op, states: list[_State]) -> list[_State]:
        entry = frozenset(states[0].set_flags) if states else frozenset()
        trips = self.trip_count(op)
        outs = list(states) if not trips else []  # zero trips are a path unless the count is known
        cur = states
        for k in range(LOOP_COPIES if trips is None else min(trips, LOOP_COPIES)):
            cur = self.region(op.regions[0], [st.copy() for st in cur])
            if any(frozenset(st.set_flags) != entry for st in cur):
                self.error(f"{op.loc}: the loop body leaves flags in another state than it found them")
                return cur
            last = trips is not None and k == min(trips, LOOP_COPIES) - 1
            if trips is None or last:
                outs += cur
        return self.join(outs, op)

    def while_loop(self, op: A.Op, states: list[_State]) -> list[_State]:
        cond, body = op.regions
        outs: list[_State] = []
        cur = states
        for _ in range(LOOP_COPIES):
            cur = self.region(cond, [st.copy() for st in cur])
            outs += cur
            cur = self.region(body, [st.copy() for st in cur])
        return self.join(outs, op)

    def call(self, op: A.Op, st: _State) -> None:
        callee = str(op.attrs.get("callee", "")).lstrip("@")
        clash = set(st.set_flags) & self.callee_flags.get(callee, set())
        if clash:
            self.error(f"{op.loc}: the callee @{callee} uses flags {sorted(clash)} the caller holds set")


def used_flags(fn: A.Function) -> set[tuple]:
    """Every flag a set/wait of ``fn`` names (not following calls)."""
    out = set()

    def walk(r: A.Region) -> None:
        for op in r.ops:
            if op.name in ("pto.set_flag", "pto.wait_flag"):
                out.add(flag_of(op))
            for x in op.regions:
                walk(x)

    walk(fn.body)
    return out


def check_flags(fn: A.Function, callee_flags: dict[str, set[tuple]] | None = None) -> FlagProblems:
    """Check the flag invariant of ``fn`` (see the module docstring). ``callee_flags``: the flags each
    callee uses (with its own callees'), which must not be set in the caller across the call."""
    ch = _Checker(fn, callee_flags or {})
    for end in ch.region(fn.body, [_State()]):
        if end.set_flags:
            ch.error(f"{fn.loc}: @{fn.name} returns with flags {sorted(end.set_flags)} still set")
    return ch.problems
