"""Where to put set/wait pairs and barriers: a happens-before oracle plus greedy placement.

The oracle walks the function once per round, with every loop body unrolled twice (copy 0 stands for
the first iteration, copy 1 for every later one, so hazards "around the back edge" show up as
copy 0 -> copy 1) and both arms of every ``scf.if``. It keeps a vector clock per pipe: ``vc[Q][P]``
= every P instruction numbered ``<= vc[Q][P]`` is known complete before Q's next instruction
starts. ``set_flag`` snapshots the source pipe's clock (plus all its own issued work),
``wait_flag`` merges the snapshot into the destination pipe, barriers complete a pipe's (or every
pipe's) work. Paths merge by taking the minimum, which is what makes ``scf.if`` arms and loops that
may run zero times conservative.

At the first consumer instruction whose hazard with an earlier instruction is not ordered, the
latest such producer is ordered by one new sync and the walk restarts. Placement (§6.5):

* same pipe, not in order (V on A2/A3): ``barrier`` right before the consumer;
* other pipe, same loop iteration: ``set_flag`` right after the producer and ``wait_flag`` right
  before the consumer, both in the innermost block that contains the two (a producer inside a
  loop or an if arm gets its set after that loop/if, so sets and waits stay balanced);
* other pipe, around a loop's back edge (the producer is at or after the consumer in the body):
  wait before the consumer and set after the producer in the body, a pre-set before the loop (the
  first iteration's wait passes) and a wait after it (no flag left set). The pair is hoisted out
  of directly enclosing loops, so a ping/pong buffer keeps one flag across a whole loop nest, as a
  hand-written double-buffered kernel does.

Restarting after every placement is what makes the result minimal: a later hazard that the new
flag chain already orders transitively (MTE2 -> V plus V -> MTE3 orders MTE2 -> MTE3) gets nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ptoisa.errors import InputError
from ptoisa.machine import Machine
from ptoisa.sync.model import OpInfo, SyncModel

MAX_ROUNDS = 4000
PRIORITY = {"set": 0, "barrier": 1, "wait": 2}


@dataclass(slots=True)
class Item:
    """One sync op to emit. ``pair`` links a set to its waits; barriers use ``src`` (``ALL`` = full)."""

    kind: str  # "set" | "wait" | "barrier"
    src: str
    dst: str = ""
    pair: int = -1
    fence: bool = False  # a set preceded by a full barrier (see ptoisa.sync.insert: reuse in time)


@dataclass(slots=True)
class Pair:
    pid: int
    src: str
    dst: str
    producer: Any
    consumer: Any
    carried: bool = False


@dataclass(slots=True)
class Plan:
    before: dict[int, list[Item]] = field(default_factory=dict)
    after: dict[int, list[Item]] = field(default_factory=dict)
    region_start: dict[int, list[Item]] = field(default_factory=dict)
    pairs: list[Pair] = field(default_factory=list)
    barriers: int = 0
    fences: int = 0
    ids: dict[int, int] = field(default_factory=dict)  # pair id -> event id (ptoisa.sync.events)

    def add(self, where: dict[int, list[Item]], key: int, item: Item) -> None:
        lst = where.setdefault(key, [])
        lst.append(item)
        lst.sort(key=lambda it: PRIORITY[it.kind])


class _Found(Exception):
    """Stops a round at the first unordered hazard."""


@dataclass(slots=True)
class Inst:
    seq: int
    op: Any
    pipe: str
    loops: tuple[tuple[int, int, int], ...]  # (loop op id, loop execution, copy) outer -> inner
    branches: tuple[tuple[int, int], ...]  # (if execution, arm)


class State:
    __slots__ = ("flags", "pipes", "vc")

    def __init__(self, pipes: tuple[str, ...]) -> None:
        self.pipes = pipes
        self.vc: dict[str, dict[str, int]] = {p: {} for p in pipes}
        self.flags: dict[int, dict[str, int]] = {}

    def copy(self) -> State:
        s = State(self.pipes)
        s.vc = {p: dict(v) for p, v in self.vc.items()}
        s.flags = {k: dict(v) for k, v in self.flags.items()}
        return s

    @staticmethod
    def merge(states: list[State]) -> State:
        if len(states) == 1:
            return states[0]
        out = State(states[0].pipes)
        for p in out.pipes:
            keys = set().union(*(s.vc[p].keys() for s in states))
            out.vc[p] = {k: min(s.vc[p].get(k, 0) for s in states) for k in keys}
        common = set(states[0].flags).intersection(*(s.flags.keys() for s in states[1:]))
        for f in common:
            keys = set().union(*(s.flags[f].keys() for s in states))
            out.flags[f] = {k: min(s.flags[f].get(k, 0) for s in states) for k in keys}
        return out


class Oracle:
    """One walk of the function under the current plan; stops at the first unordered hazard."""

    def __init__(self, planner: Planner) -> None:
        self.pl = planner
        self.model = planner.model
        self.plan = planner.plan
        self.counter = 0
        self.loop_exec = 0
        self.if_exec = 0
        self.insts: dict[int, list[Inst]] = {}
        self.found: tuple[Inst, Inst] | None = None

    def run(self) -> tuple[Inst, Inst] | None:
        try:
            self.region(self.model.body, State(self.pl.pipes), (), ())
        except _Found:
            return self.found
        return None

    def apply(self, items: list[Item] | None, st: State) -> None:
        for it in items or ():
            if it.kind == "set":
                snap = dict(st.vc[it.src])
                snap[it.src] = self.counter
                st.flags[it.pair] = snap
            elif it.kind == "wait":
                snap = st.flags.pop(it.pair, None)
                if snap:
                    vc = st.vc[it.dst]
                    for k, v in snap.items():
                        if v > vc.get(k, 0):
                            vc[k] = v
            elif it.src == "ALL":
                for p in st.pipes:
                    st.vc[p] = dict.fromkeys(st.pipes, self.counter)
            else:
                st.vc[it.src][it.src] = self.counter

    def region(self, region: Any, st: State, loops: tuple, branches: tuple) -> State:
        self.apply(self.plan.region_start.get(id(region)), st)
        for op in region.ops:
            key = id(op)
            self.apply(self.plan.before.get(key), st)
            info = self.model.info[key]
            kind = info.kind
            if kind == "sync":
                self.apply([_user_item(self.model.user_sync(op))], st)
            elif kind == "access":
                self.access(op, info, st, loops, branches)
            elif kind == "for":
                st = self.loop(op, st, loops, branches)
            elif kind == "if":
                st = self.branch(op, st, loops, branches)
            elif kind == "while":
                for _ in range(2):
                    for r in op.regions:
                        st = self.region(r, st, loops, branches)
                st = self.region(op.regions[0], st, loops, branches)
            elif kind == "region":
                for r in op.regions:
                    st = self.region(r, st, loops, branches)
            self.apply(self.plan.after.get(key), st)
        return st

    def loop(self, op: Any, st: State, loops: tuple, branches: tuple) -> State:
        n = self.model.trip_count(op)
        copies = 2 if n is None else min(n, 2)
        self.loop_exec += 1
        ex = self.loop_exec
        states = [st.copy()] if n is None else []
        cur = st
        for k in range(copies):
            cur = self.region(op.regions[0], cur, loops + ((id(op), ex, k),), branches)
            if n is None:
                states.append(cur.copy())
        return State.merge(states) if n is None else cur

    def branch(self, op: Any, st: State, loops: tuple, branches: tuple) -> State:
        self.if_exec += 1
        ex = self.if_exec
        outs = []
        for arm, r in enumerate(op.regions):
            outs.append(self.region(r, st.copy(), loops, branches + ((ex, arm),)))
        if len(op.regions) < 2:
            outs.append(st)
        return State.merge(outs)

    def access(self, op: Any, info: OpInfo, st: State, loops: tuple, branches: tuple) -> None:
        self.counter += 1
        inst = Inst(self.counter, op, info.pipe, loops, branches)
        q = info.pipe
        in_order = self.pl.in_order.get(q, True)
        vcq = st.vc[q]
        worst: Inst | None = None
        cbranch = dict(branches)
        for sp in self.pl.candidates(op):
            for p in self.insts.get(sp, ()):
                if p.pipe == q and in_order:
                    continue
                if vcq.get(p.pipe, 0) >= p.seq:
                    continue
                if any(cbranch.get(k, a) != a for k, a in p.branches):
                    continue  # the two arms of one if never both run
                if worst is not None and p.seq <= worst.seq:
                    continue
                if self.pl.conflict(p.op, op, relation(p, inst)):
                    worst = p
        self.insts.setdefault(id(op), []).append(inst)
        if worst is not None:
            self.found = (worst, inst)
            raise _Found()


def _user_item(sync: tuple) -> Item:
    """A hand-written sync op as a plan item (its flag keyed by the flag itself, not a pair id)."""
    kind, src, dst, event = sync
    return Item(kind, src, dst, pair=("user", src, dst, event))  # type: ignore[arg-type]


def relation(p: Inst, c: Inst) -> int | None:
    """The outermost common loop in which ``p`` and ``c`` are in different iterations, or None."""
    for (lp, ep, kp), (lc, ec, kc) in zip(p.loops, c.loops, strict=False):
        if lp != lc or ep != ec:
            break
        if kp != kc:
            return lp
    return None


class Planner:
    """Builds the :class:`Plan` of one function."""

    def __init__(self, model: SyncModel, machine: Machine) -> None:
        self.model = model
        self.pipes = tuple(machine.pipes)
        self.in_order = dict(machine.in_order)
        self.plan = Plan()
        self._cand: dict[int, list[int]] = {}
        self._conf: dict[tuple[int, int, int | None], bool] = {}
        self._pipes: dict[int, frozenset[str]] = {}
        self.accesses = [oid for oid, info in model.info.items() if info.kind == "access"]
        self._fences()

    # ------------------------------------------------------------------------------- conflicts

    def conflict(self, p: Any, c: Any, varying: int | None) -> bool:
        key = (id(p), id(c), varying)
        hit = self._conf.get(key)
        if hit is None:
            hit = self._conf[key] = self.model.conflict(p, c, varying)
        return hit

    def candidates(self, c: Any) -> list[int]:
        """Static producers that may conflict with ``c`` in some pair of iterations."""
        got = self._cand.get(id(c))
        if got is None:
            ops = self.model.ops
            got = [p for p in self.accesses if self.conflict(ops[p], c, -1)]
            self._cand[id(c)] = got
        return got

    # ------------------------------------------------------------------------------- structure

    def _has_access(self, op: Any) -> bool:
        for r in op.regions:
            for o in r.ops:
                kind = self.model.info[id(o)].kind
                if kind in ("access", "fence") or (o.regions and self._has_access(o)):
                    return True
        return False

    def _fences(self) -> None:
        """Full barriers around calls and unmodelled ops, and around ``scf.while`` regions (the
        pass does not pipeline while loops: every iteration starts from drained pipes)."""
        for oid, info in self.model.info.items():
            if info.kind == "fence":
                self.plan.add(self.plan.before, oid, Item("barrier", "ALL"))
                self.plan.add(self.plan.after, oid, Item("barrier", "ALL"))
                self.plan.fences += 1
            elif info.kind == "while" and self._has_access(self.model.ops[oid]):
                op = self.model.ops[oid]
                for r in op.regions:
                    self.plan.add(self.plan.region_start, id(r), Item("barrier", "ALL"))
                self.plan.add(self.plan.after, oid, Item("barrier", "ALL"))
                self.plan.fences += 1

    def _ancestor_in(self, op: Any, region: Any) -> Any | None:
        for o, r in self.model.chain(op):
            if r is region:
                return o
        return None

    def pipes_in(self, op: Any) -> frozenset[str]:
        """Pipes that ``op`` (with everything nested in it) issues work to."""
        got = self._pipes.get(id(op))
        if got is None:
            info = self.model.info[id(op)]
            if info.kind == "access":
                got = frozenset((info.pipe,))
            elif info.kind == "fence":
                got = frozenset(self.pipes)
            else:
                got = frozenset(p for r in op.regions for o in r.ops for p in self.pipes_in(o))
            self._pipes[id(op)] = got
        return got

    def _sink(self, region: Any, ip: int, stop: int, pipe: str, carried: bool) -> Any | None:
        """Where the set after ``region.ops[ip]`` goes: the op to put it after, or None for "right
        before ``region.ops[stop]``" (just ahead of the consumer's wait).

        A set_flag occupies its source queue until every earlier op of that pipe has completed, so a
        set right after a DMA stalls the next DMA for the whole transfer latency. Sinking it past
        later plain ops of the same pipe lets the queue stream (the consumer then also waits for
        those, which costs only their occupancy). Sinking stops at loops with work on the pipe
        (their work could be long) and, for a loop-carried flag, at any op of the pipe: there the
        flag would make the next iteration wait for unrelated later work (a ping/pong buffer's
        store would wait for the other buffer's)."""
        ops = region.ops
        k = ip
        while k + 1 < stop:
            nxt = ops[k + 1]
            if self.model.info[id(nxt)].kind == "end":
                break
            if pipe in self.pipes_in(nxt) and (carried or self.model.info[id(nxt)].kind in ("for", "while")):
                break
            k += 1
        if not carried and k + 1 == stop:
            return None
        return ops[k]

    def _hoist(self, loop: Any) -> Any:
        cur = loop
        while True:
            _, owner = self.model.parent[id(cur)]
            if owner is None or self.model.info[id(owner)].kind != "for":
                return cur
            cur = owner

    # ------------------------------------------------------------------------------- placement

    def place(self, p: Inst, c: Inst) -> None:
        model, plan = self.model, self.plan
        L = relation(p, c)
        if L is None:
            regions_c = {id(r) for _, r in model.chain(c.op)}
            region = next(r for _, r in model.chain(p.op) if id(r) in regions_c)
        else:
            region = model.ops[L].regions[0]
        pa = self._ancestor_in(p.op, region)
        ca = self._ancestor_in(c.op, region)
        if pa is None or ca is None:
            raise InputError("automatic synchronisation cannot place a sync between these ops "
                             f"({_what(model, p.op)} -> {_what(model, c.op)})", model.loc(c.op))
        ip, ic = model.index[id(pa)], model.index[id(ca)]
        carried = L is not None and ip >= ic
        if L is None and ip >= ic:
            raise InputError("automatic synchronisation cannot order these ops "
                             f"({_what(model, p.op)} -> {_what(model, c.op)})", model.loc(c.op))
        if p.pipe == c.pipe:
            plan.add(plan.before, id(ca), Item("barrier", c.pipe))
            plan.barriers += 1
            return
        pair = Pair(len(plan.pairs), p.pipe, c.pipe, p.op, c.op, carried)
        plan.pairs.append(pair)
        item = Item("set", p.pipe, c.pipe, pair.pid)
        anchor = self._sink(region, ip, ic if not carried else len(region.ops), p.pipe, carried)
        if anchor is None:
            plan.add(plan.before, id(ca), item)
        else:
            plan.add(plan.after, id(anchor), item)
        plan.add(plan.before, id(ca), Item("wait", p.pipe, c.pipe, pair.pid))
        if carried:
            h = self._hoist(model.ops[L])
            plan.add(plan.before, id(h), Item("set", p.pipe, c.pipe, pair.pid))
            plan.add(plan.after, id(h), Item("wait", p.pipe, c.pipe, pair.pid))

    def build(self) -> Plan:
        seen: set[tuple[int, int, int, str]] = set()
        for _ in range(MAX_ROUNDS):
            found = Oracle(self).run()
            if found is None:
                return self.plan
            p, c = found
            key = (id(p.op), id(c.op), relation(p, c) or 0, p.pipe)
            if key in seen:
                raise InputError(f"automatic synchronisation could not order {_what(self.model, p.op)} "
                                 f"before {_what(self.model, c.op)}", self.model.loc(c.op))
            seen.add(key)
            self.place(p, c)
        raise InputError("automatic synchronisation did not converge", self.model.loc(self.model.body))


def _what(model: SyncModel, op: Any) -> str:
    loc = model.loc(op)
    name = getattr(op, "name", type(op).__name__)
    return f"{name} at {loc}" if loc is not None else str(name)
