"""Where the cycles go: the critical path of a run and the bottleneck it shows.

The busiest pipe is not always what bounds a kernel: a load -> compute -> store chain without double
buffering keeps every pipe mostly idle, and its time is the sum of the stages, joined by flags. So the
summary follows the critical path: for each instruction it asks what made it start when it did: its
pipe's previous instruction (the pipe was busy), the flag its wait_flag consumed or the cross-core
hand-off (FIFO, sync) its wait took (the pipe was blocked on another pipe, maybe on another core), or
the scalar unit issuing it. Each cycle of the makespan is charged to exactly one of: a pipe working
(occupancy), a pipe's results in flight (latency beyond occupancy), sync costs, or the scalar unit.
The waits the path crosses are kept with the interval their pipe spent blocked.

The path is computed while the run goes on (a :class:`~pyptoemu.core.recorder.Recorder` consumer,
in start order): each instruction gets the summary of the longest chain that ends at its start (a
few counters, not the chain itself), so memory does not grow with the run, and on a chip the path
follows every core: the instruction that finished last, on whichever core, and back through the
hand-offs to the cores that held it up.

Verdict: a pipe whose work covers at least half of the makespan bounds the kernel
(``MTE2-bound: 78% of the makespan is MTE2 work on the critical path``); otherwise the kernel is held
up by the chain of waits (``latency-bound: 61% of the makespan waiting on MTE2->MTE1 flags at lines
40-52``), or by the scalar unit issuing (``issue-bound``).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from pyptoemu.core.pipe import BARRIER, OP, WAIT, XWAIT, Instr, QueueRoom

BOUND_SHARE = 0.5  # a pipe whose work covers this share of the makespan bounds the kernel
MIN_LOOKBACK = 8  # release times a pipe's index holds before the first pass that drops the stale ones
S_SYNCS = 64  # recent sync points of a scalar unit searched for the one an issue followed
PIPES = ("S", "MTE1", "MTE2", "MTE3", "V", "M", "FIX")
WHATS = ("work", "latency", "sync")
SLOT = {(w, p): i for i, (w, p) in enumerate((w, p) for w in WHATS for p in PIPES)}
# the same slots by pipe, for the per-instruction path (no tuple key built per lookup)
WORK = {p: SLOT[("work", p)] for p in PIPES}
LATENCY = {p: SLOT[("latency", p)] for p in PIPES}
SYNC = {p: SLOT[("sync", p)] for p in PIPES}


@dataclass
class Bottleneck:
    """The critical path, summed: cycles per (what, pipe), the crossed waits, a verdict.

    ``waits`` maps a flag ``(src, dst)`` (or ``("x", op)`` for a cross-core wait) to
    ``[blocked cycles, latest blocked cycle, first line, last line]``: the cycles the waiting pipe
    spent blocked on that kind of wait along the path, each cycle counted once."""

    makespan: int
    charged: dict[tuple[str, str], int] = field(default_factory=dict)  # ("work"|"latency"|"sync", pipe)
    waits: dict[tuple[str, str], list[int]] = field(default_factory=dict)
    pipe: str = "S"
    kind: str = "issue-bound"
    text: str = ""

    def share(self, pipe: str) -> float:
        cycles = self.charged.get(("work", pipe), 0) + self.charged.get(("latency", pipe), 0)
        return cycles / self.makespan if self.makespan else 0.0

    def wait_share(self, flag: tuple[str, str]) -> float:
        """Share of the makespan during which the waiting pipe was blocked on this kind of flag."""
        w = self.waits.get(flag)
        return w[0] / self.makespan if w and self.makespan else 0.0


class _Path:
    """The summary of a chain of instructions up to some cycle: cycles per slot and the waits."""

    __slots__ = ("cycles", "waits")

    def __init__(self, cycles: list, waits: dict) -> None:
        self.cycles = cycles
        self.waits = waits  # flag -> (blocked cycles, latest blocked cycle, first line, last line); shared

    def plus(self, what: str, pipe: str, n: int, also: tuple | None = None) -> _Path:
        """This path with ``n`` more cycles of ``what`` on ``pipe`` (and ``also``: one more)."""
        if n <= 0 and (also is None or also[2] <= 0):
            return self
        cycles = self.cycles[:]
        if n > 0:
            cycles[SLOT[(what, pipe)]] += n
        if also is not None and also[2] > 0:
            cycles[SLOT[(also[0], also[1])]] += also[2]
        return _Path(cycles, self.waits)

    def add(self, i: int, n: int) -> _Path:
        """This path with ``n`` more cycles in slot ``i`` (the per-instruction form of :meth:`plus`)."""
        if n <= 0:
            return self
        cycles = self.cycles[:]
        cycles[i] += n
        return _Path(cycles, self.waits)

    def add2(self, i: int, n: int, j: int, m: int) -> _Path:
        """This path with ``n`` more cycles in slot ``i`` and ``m`` more in slot ``j``."""
        if n <= 0 and m <= 0:
            return self
        cycles = self.cycles[:]
        if n > 0:
            cycles[i] += n
        if m > 0:
            cycles[j] += m
        return _Path(cycles, self.waits)

    def waited(self, flag: tuple, lo: int, hi: int, line: int) -> _Path:
        """This path having crossed a wait blocked over [lo, hi) (cycles already on it not recounted)."""
        waits = dict(self.waits)
        total, last, first_line, last_line = waits.get(flag, (0, 0, 0, 0))
        total += max(0, hi - max(lo, last))
        if line:
            first_line = min(first_line, line) if first_line else line
            last_line = max(last_line, line)
        waits[flag] = (total, max(last, hi), first_line, last_line)
        return _Path(self.cycles, waits)


EMPTY = _Path([0] * len(SLOT), {})


class _Node:
    """What the path keeps of an instruction: its times and the chain up to its start."""

    __slots__ = ("done", "drained", "end", "full_barrier", "kind", "path", "pipe", "seq", "start")

    def __init__(self, ins: Instr, path: _Path | None, full_barrier: bool = False) -> None:
        self.start, self.end, self.done = ins.start, ins.end, ins.done
        self.kind, self.pipe, self.seq = ins.kind, ins.pipe, ins.seq
        self.path = path  # up to its start (a full barrier: up to its end, once known)
        self.full_barrier = full_barrier
        self.drained: _Node | None = None  # a full barrier: the pipe instruction that completed last before it

    def until(self, t: int) -> _Path:
        """The chain through this instruction up to cycle ``t``."""
        if self.full_barrier:
            if self.path is None:  # the drain is known once everything that started before the end was seen
                pred = self.drained
                if pred is None or pred.done <= 0:
                    self.path = EMPTY.plus("sync", "S", self.end)
                else:
                    self.path = pred.until(pred.done).plus("sync", "S", self.end - pred.done)
                self.drained = None
            return self.path
        start = self.start
        if self.kind == OP:
            work_end = min(self.end, t)
            pipe = self.pipe
            return self.path.add2(WORK[pipe], work_end - start, LATENCY[pipe], t - max(work_end, start))
        return self.path.add(SYNC[self.pipe], t - start)


class _CoreState:
    """Per core: the pipe instructions that may still have released a later one (indexed by the
    cycles they released their pipe: end and completion), the recent scalar sync points, and the
    pipe instruction that completed last.

    What it keeps is what is still in flight, not a fixed window: a chip holds one of these per
    core, so its memory follows the instructions in flight on all cores, not the core count times
    a lookback. A pipe's index drops the times before the current start whenever it has doubled
    since the last such pass (amortised constant work per instruction); the scalar sync points
    before the latest one that ended by the current start are never the answer again."""

    __slots__ = ("by_time", "draining", "latest", "limits", "s_syncs")

    def __init__(self) -> None:
        self.by_time: dict[str, dict[int, _Node]] = {}
        self.limits: dict[str, int] = {}  # pipe -> index size that triggers the next pass
        self.s_syncs: deque = deque(maxlen=S_SYNCS)
        self.draining: list[_Node] = []  # full barriers whose drain may still be recorded
        self.latest: _Node | None = None  # the pipe instruction seen so far that completed last

    def add(self, node: _Node) -> None:
        pipe = node.pipe
        index = self.by_time.get(pipe)
        if index is None:
            index = self.by_time[pipe] = {}
            self.limits[pipe] = MIN_LOOKBACK
        elif len(index) > self.limits[pipe]:
            # instructions come in start order: a time before this start can release nothing later
            start = node.start
            self.by_time[pipe] = index = {t: n for t, n in index.items() if t >= start}
            self.limits[pipe] = max(MIN_LOOKBACK, 2 * len(index))
        index[node.end] = node
        index[node.done] = node  # a later one wins: the search went from the most recent back
        latest = self.latest
        if latest is None or node.done >= latest.done:
            self.latest = node
        if self.draining:
            for barrier in self.draining:
                if node.done <= barrier.end and (barrier.drained is None or node.done >= barrier.drained.done):
                    barrier.drained = node

    def begin_drain(self, barrier: _Node) -> None:
        """A full barrier: what completed last by its end, among what was seen and what will be
        (everything this core started before the barrier completed by its end)."""
        latest = self.latest
        if latest is not None and latest.done <= barrier.end:
            barrier.drained = latest
        else:  # not drained by it (cannot happen on one core): the latest that was
            for index in self.by_time.values():
                for node in index.values():
                    if node.done <= barrier.end and (barrier.drained is None or node.done >= barrier.drained.done):
                        barrier.drained = node
        self.draining.append(barrier)

    def settle(self, now: int) -> None:
        """Full barriers that ended before ``now`` have seen everything they drained."""
        if self.draining and self.draining[0].end < now:
            for barrier in [b for b in self.draining if b.end < now]:
                barrier.until(barrier.end)
            self.draining = [b for b in self.draining if b.end >= now]

    def scalar_sync_before(self, t: int) -> _Node | None:
        """The latest scalar sync point that ended by ``t``; the ones before it go (every later
        question asks about a later ``t``, which that one answers first)."""
        syncs = self.s_syncs
        for k in range(len(syncs) - 1, -1, -1):
            node = syncs[k]
            if node.end <= t:
                for _ in range(k):
                    syncs.popleft()
                return node
        return None

    def add_sync(self, node: _Node) -> None:
        """A scalar sync point, started at ``node.start``: no later question asks about an
        earlier cycle, so the points before the latest that ended by then go now."""
        syncs = self.s_syncs
        if syncs:
            self.scalar_sync_before(node.start)
        syncs.append(node)


class CriticalPath:
    """Follows a run (a recorder consumer) and sums its critical path when asked (:meth:`result`)."""

    def __init__(self) -> None:
        self.cores: dict[int, _CoreState] = {}
        self.last: _Node | None = None

    def consume(self, ins: Instr) -> None:
        state = self.cores.get(id(ins.core))
        if state is None:
            state = self.cores[id(ins.core)] = _CoreState()
        start = ins.start
        draining = state.draining
        if draining and draining[0].end < start:
            state.settle(start)
        pipe, kind = ins.pipe, ins.kind
        if pipe == "S":
            if kind == BARRIER:  # a full barrier: waited for the pipes to drain
                node = _Node(ins, None, full_barrier=True)
                state.begin_drain(node)
            else:
                node = _Node(ins, self._path_to_start(ins, state))
            ins.cp = node
            if kind in (BARRIER, WAIT, XWAIT):  # the scalar unit waited: later issues follow it
                state.add_sync(node)
        else:
            path = None
            if kind != WAIT and kind != XWAIT:  # the usual case, inline: the pipe's previous instruction released it
                index = state.by_time.get(pipe)
                pred = index.get(start) if index else None
                if pred is not None:
                    p_path, p_start, p_pipe = pred.path, pred.start, pred.pipe
                    if pred.kind == OP:  # pred.until(start): its work, then its results in flight
                        work_end = min(pred.end, start)
                        n = work_end - p_start
                        m = start - max(work_end, p_start)
                        if n > 0 or m > 0:
                            cycles = p_path.cycles[:]
                            if n > 0:
                                cycles[WORK[p_pipe]] += n
                            if m > 0:
                                cycles[LATENCY[p_pipe]] += m
                            p_path = _Path(cycles, p_path.waits)
                    elif start > p_start:
                        cycles = p_path.cycles[:]
                        cycles[SYNC[p_pipe]] += start - p_start
                        p_path = _Path(cycles, p_path.waits)
                    path = p_path
            if path is None:
                path = self._path_to_start(ins, state)
            node = _Node(ins, path)
            ins.cp = node
            state.add(node)
        last = self.last
        if last is None or node.done > last.done or node.done == last.done and node.seq > last.seq:
            self.last = node

    def _path_to_start(self, ins: Instr, state: _CoreState) -> _Path:
        start = ins.start
        if ins.kind == XWAIT and isinstance(ins.flag, QueueRoom):
            # the scalar unit stalled on a full issue queue: it went on when that pipe took its next
            # instruction, right after starting (or finishing a wait or set) ``made_by``
            made = ins.flag.made_by
            node = made.cp if made is not None else None
            if node is not None:
                t = min(node.start if node.kind == OP else node.end, start)
                return node.until(t).add(SYNC["S"], start - t)
        if ins.kind in (WAIT, XWAIT) and ins.released_by is not None and start > ins.wait_start:
            released = self._releaser(ins)
            if released is not None:
                setter, ts = released
                flag = ins.flag[:2] if ins.kind == WAIT else ("x", ins.name)
                line = ins.loc.line if ins.loc else 0
                return setter.until(ts).add(SYNC[setter.pipe], start - ts).waited(flag, ins.wait_start, start, line)
        if ins.pipe != "S":
            index = state.by_time.get(ins.pipe)
            pred = index.get(start) if index else None
            if pred is not None:
                return pred.until(start)
        # issued late: the scalar unit was busy up to here since its last sync point
        sync = state.scalar_sync_before(start)
        if sync is None:
            return EMPTY.plus("work", "S", start)
        return sync.until(sync.end).plus("work", "S", start - sync.end)

    @staticmethod
    def _releaser(ins: Instr) -> tuple[_Node, int] | None:
        """The instruction whose release let the wait go (the last of several) and when it did."""
        r = ins.released_by
        best = None
        for s in r if isinstance(r, list) else [r]:
            node = s.cp
            if node is None:
                continue
            when = min(node.done if (ins.kind == XWAIT and node.kind == OP) else node.end, ins.start)
            if best is None or when > best[1]:
                best = (node, when)
        return best

    def finish(self) -> None:
        """Nothing to conclude until the makespan is known (:meth:`result`)."""

    def result(self, makespan: int) -> Bottleneck:
        b = Bottleneck(makespan=makespan)
        last = self.last
        if last is None or makespan <= 0:
            b.text = "no instructions ran"
            return b
        path = last.until(min(makespan, last.done)).plus("sync", "S", makespan - last.done)
        for (what, pipe), i in SLOT.items():
            if path.cycles[i] > 0:
                b.charged[(what, pipe)] = path.cycles[i]
        b.waits = {flag: list(w) for flag, w in path.waits.items()}
        _verdict(b)
        return b


def _verdict(b: Bottleneck) -> None:
    pipes = {p for (_, p) in b.charged}
    top = max(sorted(pipes), key=b.share) if pipes else "S"
    b.pipe = top
    share = b.share(top)
    if share >= BOUND_SHARE:
        if top == "S":
            b.kind = "issue-bound"
            b.text = f"issue-bound: {share:.0%} of the makespan is the scalar unit issuing on the critical path"
        else:
            b.kind = f"{top}-bound"
            b.text = f"{top}-bound: {share:.0%} of the makespan is {top} work on the critical path"
        return
    if b.waits:
        flag = max(sorted(b.waits), key=b.wait_share)
        _, _, first, last = b.waits[flag]
        where = ""
        if first:
            where = f" at line {first}" if first == last else f" at lines {first}-{last}"
        what = flag[1] if flag[0] == "x" else f"{flag[0]}->{flag[1]} flags"
        b.kind = "latency-bound"
        b.text = (f"latency-bound: {b.wait_share(flag):.0%} of the makespan waiting on {what}{where} "
                  f"(largest pipe share on the critical path: {top} {share:.0%})")
        return
    b.kind = "latency-bound"
    b.text = (f"latency-bound: no pipe works half of the makespan (largest share on the critical path: "
              f"{top} {share:.0%})")


__all__ = ["BOUND_SHARE", "Bottleneck", "CriticalPath"]
