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
(``MTE2-bound: 78% of the makespan is MTE2 work on the critical path``); the scalar unit's own sync
ops covering half of it (full barriers, as automatic sync puts around each iteration of a scalar
while loop) make it ``sync-bound``; otherwise the kernel is held up by the chain of waits
(``latency-bound: 61% of the makespan waiting on MTE2->MTE1 flags at lines 40-52``), or by the
scalar unit issuing (``issue-bound``). In a run in waves, the block scheduler dispatching a block to
a core that freed up (``launch_block`` cycles, core/chip.py) is on the path between the waves: it is
named after the verdict (``; block dispatch between waves: 25%``), or is the verdict when it covers
half of the makespan (``dispatch-bound``).
"""

# ruff: noqa: PLR1730 - per-instruction code compares where it could call max() (a call costs
# several comparisons in CPython)
from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from operator import attrgetter, itemgetter

from pyptoemu.core.pipe import BARRIER, OP, SET, WAIT, XWAIT, Instr, QueueRoom

BOUND_SHARE = 0.5  # a pipe whose work covers this share of the makespan bounds the kernel
S_SYNCS = 64  # recent sync points of a scalar unit searched for the one an issue followed
PIPES = ("S", "MTE1", "MTE2", "MTE3", "V", "M", "FIX")
WHATS = ("work", "latency", "sync")
SLOT = {(w, p): i for i, (w, p) in enumerate((w, p) for w in WHATS for p in PIPES)}
# the block scheduler handing a block of a later wave to its unit (AICore._record_block_start): one
# slot of its own, so the gap between waves is named as what it is, not the scalar unit issuing
DISPATCH = SLOT[("dispatch", "chip")] = len(SLOT)
# the same slots by pipe, for the per-instruction path (no tuple key built per lookup)
WORK = {p: SLOT[("work", p)] for p in PIPES}
LATENCY = {p: SLOT[("latency", p)] for p in PIPES}
SYNC = {p: SLOT[("sync", p)] for p in PIPES}
SYNC_S = SYNC["S"]
PIPE_SLOTS = {p: (WORK[p], LATENCY[p], SYNC[p]) for p in PIPES}  # a pipe path's three slots (see WAITS)
_MADE_BY = itemgetter(2)  # of a stall mark (at, number, made_by): ScalarUnit.pending_marks
_PATH = attrgetter("path")
_END = attrgetter("end")


@dataclass
class Bottleneck:
    """The critical path, summed: cycles per (what, pipe), the crossed waits, a verdict.

    ``waits`` maps a flag ``(src, dst)`` (or ``("x", op)`` for a cross-core wait) to
    ``[blocked cycles, latest blocked cycle, first line, last line]``: the cycles the waiting pipe
    spent blocked on that kind of wait along the path, each cycle counted once."""

    makespan: int
    # ("work"|"latency"|"sync", pipe), and ("dispatch", "chip"): the block scheduler between waves
    charged: dict[tuple[str, str], int] = field(default_factory=dict)
    waits: dict[tuple[str, str], list[int]] = field(default_factory=dict)
    pipe: str = "S"
    kind: str = "issue-bound"
    text: str = ""
    # per DMA pipe the shared HBM/L2 slowed: (bytes per cycle granted per stream, "hbm" | "l2", cores
    # held back) from the chip's memory system (SharedMemory.held_back); named by a pipe-bound verdict
    held: dict[str, tuple[float, str, int]] = field(default_factory=dict)

    def share(self, pipe: str) -> float:
        cycles = self.charged.get(("work", pipe), 0) + self.charged.get(("latency", pipe), 0)
        return cycles / self.makespan if self.makespan else 0.0

    def wait_share(self, flag: tuple[str, str]) -> float:
        """Share of the makespan during which the waiting pipe was blocked on this kind of flag."""
        w = self.waits.get(flag)
        return w[0] / self.makespan if w and self.makespan else 0.0


# A path (the summary of a chain of instructions up to some cycle) is one list: the cycles per slot,
# then from index WAITS four slots per kind of wait crossed (blocked cycles, latest blocked cycle,
# first line, last line), at the offset its CriticalPath gave that kind (``CriticalPath.wait_slot``:
# in the order first crossed; a path made before a kind was known is shorter, and extended when it
# crosses one). A wait is crossed at a cycle after its wait started, so at 1 or later: a latest
# blocked cycle of 0 is a kind the path has not crossed. (Slots, not a dict of tuples per path: a
# crossing copied the dict and made a tuple, ~1 M machine instructions more per run of the stream
# kernel, examples/double_buffer_1024.pto, 721 crossings.) Paths are shared and never changed in
# place: one more cycle makes a copy (``list.copy``: a slice ``[:]`` also makes and drops a slice
# object, ~0.5 M machine instructions more per run of the stream kernel). An instruction holds the
# path up to its start on ``Instr.path`` (its node on the critical path is the instruction itself:
# one object per instruction, not two).
#
# A pipe's instruction (not the scalar unit's) holds its path as a *pipe path*: a tuple ``(base,
# work, latency, sync)``, where the three counts are its pipe's slots (``PIPE_SLOTS``) and ``base``
# (a path list, shared) gives every other slot (its values of those three are stale). Along a pipe,
# an instruction that follows the one that released the pipe adds cycles to that pipe's slots only,
# so it shares the base and makes a 4-tuple, not a copy of the whole list: the list is made when
# another chain reads the path (``_until``; a wait released by a set, consume_batch), ~770 copies
# per run of the stream kernel (examples/double_buffer_1024.pto) instead of ~2800. Callgrind: -0.34 M
# machine instructions per run (the copies and frees saved, -1.6 M, less the tuples and the Python
# steps that take them apart and make them).
WAITS = len(SLOT)
EMPTY: list = [0] * len(SLOT)
_UNCROSSED = [0, 0, 0, 0]  # the slots of a kind of wait not crossed


def _plus(path: list, i: int, n: int) -> list:
    """``path`` with ``n`` more cycles in slot ``i``."""
    if n <= 0:
        return path
    path = path.copy()
    path[i] += n
    return path


def _waited(path: list, i: int, lo: int, hi: int, line: int) -> list:
    """``path`` having crossed a wait (its slots from ``i``) blocked over [lo, hi) (cycles already
    on it not recounted)."""
    path = path.copy()
    _cross(path, i, lo, hi, line)
    return path


def _cross(path: list, i: int, lo: int, hi: int, line: int) -> None:
    """:func:`_waited` on a path copy of one's own (changed in place: one copy, not two)."""
    try:
        last = path[i + 1]
    except IndexError:  # a kind of wait made known after this path was: its slots (and those before) are new
        path.extend(_UNCROSSED * ((i + 4 - len(path)) // 4))
        last = 0
    if lo < last:  # the cycles up to ``last`` are on the path already
        lo = last
    if hi > lo:
        path[i] += hi - lo
    if hi > last:
        path[i + 1] = hi
    if line:
        first_line = path[i + 2]
        if not first_line or line < first_line:
            path[i + 2] = line
        if line > path[i + 3]:
            path[i + 3] = line


class _Drain:
    """A full barrier's path while its drain is not known: the pipe instruction that completed last
    before its end among those seen so far (everything its core started before the barrier ended
    is seen once the path has passed its end), and the scalar unit's own path up to the barrier
    (``arrived``: what held the barrier up when the pipes had drained before the scalar unit got
    there, as in a kernel that works on the scalar unit alone)."""

    __slots__ = ("arrived", "barrier", "dispatch", "drained", "end")

    def __init__(self, barrier: Instr, arrived: list) -> None:
        self.barrier = barrier
        self.end = barrier.end
        # a block's start: the cycles the block scheduler took before it (the barrier's ``latency``,
        # AICore._record_block_start), charged as block dispatch after the drain; else 0
        self.dispatch = barrier.latency
        self.arrived = arrived
        self.drained: Instr | None = None


def _pipe_path(path: list, track: _PipeTrack) -> tuple:
    """``path`` (a list) as a pipe path of ``track``'s pipe (see WAITS): the list is its base."""
    return (path, path[track.work], path[track.latency], path[track.sync])


def _until(node: Instr, t: int) -> list:
    """The chain through ``node`` (an instruction the path has seen) up to cycle ``t``."""
    path = node.path
    if path.__class__ is tuple:  # a pipe path: the pipe's three slots, then the list (a copy of the base)
        base, work, latency, sync = path
        start = node.start
        if node.kind == OP:  # its work, then its results in flight
            work_end = min(t, node.end)
            n = work_end - start
            m = t - (max(start, work_end))
            if n > 0:
                work += n
            if m > 0:
                latency += m
        elif t > start:
            sync += t - start
        w, lat, syn = PIPE_SLOTS[node.pipe]
        path = base.copy()
        path[w] = work
        path[lat] = latency
        path[syn] = sync
        return path
    if path is _ROOM:  # a stall on a full issue queue, asked about for the first time
        path = node.path = _room_path(node, node.start)
    kind = node.kind
    if kind == BARRIER and node.pipe == "S":  # a full barrier: its path goes up to its end
        if type(path) is _Drain:  # the drain is known once everything that started before the end was seen
            pred = path.drained
            dispatch = path.dispatch
            freed = node.start - dispatch  # (the unit became free then, for a block's start)
            if pred is not None and pred.done >= freed:  # the pipes drained after the scalar unit got there
                path = _plus(_plus(_until(pred, pred.done), SYNC_S, freed - pred.done), DISPATCH, dispatch)
            else:  # nothing was left to drain: the scalar unit's own work led up to the barrier
                path = _plus(path.arrived, SYNC_S, node.end - node.start)
            node.path = path
        return path
    start = node.start
    if kind == OP:  # its work, then its results in flight
        end = node.end
        work_end = min(t, end)
        n = work_end - start
        m = t - (max(start, work_end))
        if n <= 0 and m <= 0:
            return path
        path = path.copy()
        pipe = node.pipe
        if n > 0:
            path[WORK[pipe]] += n
        if m > 0:
            path[LATENCY[pipe]] += m
        return path
    return _plus(path, SYNC[node.pipe], t - start)


# What ``Instr.path`` holds for a scalar-unit stall on a full issue queue whose path was not asked
# for yet: it is the path of the pipe instruction that made room (``QueueRoom.made_by``, seen before
# the stall) up to the stall's end, so it can be worked out when asked (:func:`_room_path`). Nearly
# every stall is only ever a sync point no later issue follows: working each one out cost more than
# any other kind of record.
_ROOM = object()


def _room_path(stall: Instr, start: int) -> list:
    """The path of a scalar-unit stall on a full issue queue that ended at ``start``: it went on
    when the pipe took its next instruction, right after starting (or finishing, a wait or a set)
    ``made_by``."""
    made = stall.flag.made_by
    t = min(made.start if made.kind == OP else made.end, start)
    return _plus(_until(made, t), SYNC_S, start - t)


class StallMark:
    """A stall of the scalar unit on a full issue queue the scalar unit handed on as a mark
    (``ScalarUnit.pending_marks``) instead of recording it (``Recorder.takes_stall_marks``: this path
    is the only consumer), as a node of the path: what the path reads of a stall recorded as an
    instruction (an ``XWAIT`` on ``S`` with a ``QueueRoom``), that it is a scalar-unit wait that
    started and ended at ``start``, the cycle the pipe made room, and which instruction the pipe had
    just started then (``made_by``; its own ``flag`` answers that, as a ``QueueRoom`` does). Made
    only for the marks that stay sync points (:meth:`_CoreState.take_marks`)."""

    __slots__ = ("done", "end", "made_by", "path", "seq", "start")
    kind = XWAIT
    pipe = "S"

    def __init__(self, at: int, seq: int, made_by: Instr | None) -> None:
        self.start = self.end = self.done = at
        self.seq = seq
        self.made_by = made_by
        self.path = None

    @property
    def flag(self) -> StallMark:
        return self


class _PipeTrack:
    """One pipe of one core as the path sees it: the instruction it saw last there, its recent
    instructions in the order seen (from the oldest that may still release the pipe, by ending or
    completing, at a later start), and the path slots its cycles go to (looked up once, not per
    instruction).

    ``last`` answers the usual question (did the previous instruction release this one?) without
    a search; otherwise :meth:`released_at` searches the recent instructions, the most recent
    first (a few dozen times per thousand instructions: cheaper than indexing every instruction
    by its release cycles as it comes)."""

    __slots__ = ("last", "latency", "recent", "sync", "work")

    def __init__(self, pipe: str) -> None:
        self.recent: list[Instr] = []
        self.last: Instr | None = None
        self.work, self.latency, self.sync = WORK[pipe], LATENCY[pipe], SYNC[pipe]

    def trim(self) -> None:
        """Drop the oldest recent instructions released before the last one's start: instructions
        come in start order, so they can release nothing later (the last one is not: it ends at its
        start or later). Done once per batch, it leaves what one trim per instruction would (what was
        released before an earlier start was before this one too), and a search in between finds the
        same (an instruction released before the current start is no answer to any later search)."""
        recent = self.recent
        if len(recent) > 1:
            start = recent[-1].start
            # The instructions that ended (released the pipe) before ``start`` are a prefix, found by
            # bisection: ends never decrease along a pipe, as each instruction starts once the one
            # before has released it. Of them, the first still in flight (completing at ``start`` or
            # later) stops the trim. (Half the Python steps of testing both cycles of every one.)
            k = bisect_left(recent, start, key=_END)
            if k:
                for node in recent[:k]:
                    if node.done >= start:
                        k = recent.index(node)
                        break
                if k:
                    del recent[:k]

    def released_at(self, t: int) -> Instr | None:
        """The most recent instruction seen that released the pipe (ended or completed) at ``t``."""
        for node in reversed(self.recent):
            if node.end == t or node.done == t:
                return node
        return None


class _CoreState:
    """Per core: each pipe's recent instructions (:class:`_PipeTrack`), the recent scalar sync
    points, and the full barriers draining.

    What it keeps is what is still in flight, not a fixed window: a chip holds one of these per
    core, so its memory follows the instructions in flight on all cores, not the core count times
    a lookback. A pipe's recent instructions start at the oldest one not released before the start
    of the latest one (trimmed once per batch of records; each instruction is dropped once: constant
    work per instruction); the scalar sync points
    before the latest one that ended by the current start are never the answer again."""

    __slots__ = ("draining", "last_mark", "marks", "others", "pipes", "s_syncs", "tracks")

    def __init__(self, marks: list, others: dict[int, _CoreState]) -> None:
        self.others = others  # every core's state by id(core), this one's too (begin_drain)
        self.pipes: dict[str, _PipeTrack] = {}  # in the order the pipes were first seen
        # the same with None for the scalar unit's records (S has no track): one lookup per record
        # tells a pipe's record (and finds its track) from the scalar unit's
        self.tracks: dict[str, _PipeTrack | None] = {"S": None}
        self.s_syncs: list[Instr] = []  # in start order, at most S_SYNCS
        self.draining: list[_Drain] = []  # full barriers whose drain may still be recorded
        # the core's stalls on a full issue queue handed on as marks, not taken yet (the scalar
        # unit's list: see take_marks), and the one taken so far that ended last
        self.marks = marks
        self.last_mark: StallMark | None = None

    def track(self, pipe: str) -> _PipeTrack:
        """The pipe's track, made when the pipe's first instruction is seen."""
        track = self.pipes[pipe] = self.tracks[pipe] = _PipeTrack(pipe)
        return track

    def note_drained(self, node: Instr) -> None:
        """A pipe instruction seen while full barriers drain: the last to complete by their end?"""
        done = node.done
        for drain in self.draining:
            if done <= drain.end and (drain.drained is None or done >= drain.drained.done):
                drain.drained = node

    def begin_drain(self, barrier: Instr) -> None:
        """A full barrier: what completed last by its end, among what was seen and what will be
        (everything this core started before the barrier completed by its end). A block's start
        after another core of its unit drained last (``released_by``, that core: see
        ``AICore.start_block``) drains what that core ran."""
        dispatch = barrier.latency  # a block's start: the block scheduler's cycles before it (else 0)
        drain = barrier.path = _Drain(barrier, _plus(self.scalar_path(barrier.start - dispatch), DISPATCH, dispatch))
        drained = self
        after = barrier.released_by
        if after is not None:
            drained = self.others.get(id(after), self)
        latest = drained.latest()
        if latest is not None and latest.done <= barrier.end:
            drain.drained = latest
        else:  # not drained by it (cannot happen on one core): the latest that was
            for track in drained.pipes.values():
                for node in track.recent:
                    if node.done <= barrier.end and (drain.drained is None or node.done >= drain.drained.done):
                        drain.drained = node
        self.draining.append(drain)

    def latest(self) -> Instr | None:
        """The pipe instruction seen so far that completed last (of those that completed together,
        the one seen last: the latest in (start, seq) order, the order records come in). Worked out
        when a full barrier asks, not kept up to date per instruction: it is always among the
        pipes' recent instructions, as a trim drops only instructions that completed before their
        pipe's latest start, so before the latest of the pipe completed. The pipes are trimmed
        first (what one trim per instruction would have left), so the search is short."""
        best = None
        for track in self.pipes.values():
            track.trim()
            for node in track.recent:
                if best is None or (node.done, node.start, node.seq) >= (best.done, best.start, best.seq):
                    best = node
        return best

    def settle(self, now: int) -> None:
        """Full barriers that ended before ``now`` have seen everything they drained."""
        if self.draining and self.draining[0].end < now:
            for drain in [d for d in self.draining if d.end < now]:
                _until(drain.barrier, drain.end)
            self.draining = [d for d in self.draining if d.end >= now]

    def scalar_path(self, t: int) -> list:
        """The scalar unit's path up to ``t``: busy issuing since its latest sync point by then."""
        sync = self.scalar_sync_before(t)
        if sync is None:
            return _plus(EMPTY, WORK["S"], t)
        return _plus(_until(sync, sync.end), WORK["S"], t - sync.end)

    def scalar_sync_before(self, t: int) -> Instr | None:
        """The latest scalar sync point that ended by ``t``; the ones before it go (every later
        question asks about a later ``t``, which that one answers first)."""
        syncs = self.s_syncs
        for k in range(len(syncs) - 1, -1, -1):
            node = syncs[k]
            if node.end <= t:
                del syncs[:k]
                return node
        return None

    def take_marks(self, start: float, seq: float) -> None:
        """Take the stalls the scalar unit handed on as marks (``ScalarUnit.pending_marks``) that come
        before the record numbered ``seq`` starting at ``start`` in the record order ((start, seq)), as
        :meth:`CriticalPath.consume_batch` takes a stall recorded as an instruction: a scalar sync
        point whose path is worked out when asked (``_ROOM``; from the scalar unit's path when the pipe
        had been idle). Called before anything reads the sync points, and once per batch so that
        marks do not pile up: until then, a mark changes nothing.

        Marks end in program order, and none before its predecessor's end: taken in a row, each
        leaves only itself and the one before it as sync points (add_sync keeps the latest that ended
        by the start of the new one). So of a row of marks whose paths read no sync point (the pipe
        had just started an instruction the path has seen), all but the last two change nothing
        that lasts: no node is made for them (most marks: the stream kernel's, nearly all)."""
        marks = self.marks
        # the marks before (start, seq) are a prefix, found by bisection: marks come in (at, number)
        # order, and a mark's tuple (at, number, made) compares by (at, number) with the pair (no
        # record has a mark's number, so ``made`` is never compared). A loop over the marks cost
        # ~0.4 M machine instructions per run of the stream kernel (1264 marks).
        k = bisect_right(marks, (start, seq))
        if not k:
            return
        row = marks[:k]
        del marks[:k]
        skip = max(k - 2, 0)
        if skip:  # the row's instructions that made room, all seen by the path? (C loops, no generator)
            made_by = list(map(_MADE_BY, row[:-1]))
            if None in made_by or None in map(_PATH, made_by):
                skip = 0  # a path from the sync points before: each one in turn
        for at, number, made in row[skip:]:
            mark = StallMark(at, number, made)
            if self.draining and self.draining[0].end < at:
                self.settle(at)
            mark.path = _ROOM if made is not None and made.path is not None else self.scalar_path(at)
            self.add_sync(mark)
        self.last_mark = mark  # the last to end of all so far

    def add_sync(self, node: Instr) -> None:
        """A scalar sync point, started at ``node.start``: no later question asks about an
        earlier cycle, so the points before the latest that ended by then go now."""
        syncs = self.s_syncs
        if syncs:
            self.scalar_sync_before(node.start)
        syncs.append(node)
        if len(syncs) > S_SYNCS:  # the oldest goes
            del syncs[0]


_NO_CORE = object()  # what CriticalPath._core holds before the first instruction (a core may be None)


class CriticalPath:
    """Follows a run (a recorder consumer) and sums its critical path when asked (:meth:`result`).

    Each instruction seen gets ``Instr.path``, the summary of the longest chain up to its start
    (a full barrier's: up to its end, once its drain is known)."""

    takes_stall_marks = True  # a stall on a full issue queue may come as a mark (_CoreState.take_marks)

    def __init__(self) -> None:
        self.cores: dict[int, _CoreState] = {}
        self.s_last: Instr | None = None  # the scalar-unit record seen so far that completed last
        # the core of the previous instruction and its state (no lookup per record); none at first
        self._core: object = _NO_CORE
        self._state: _CoreState | None = None
        # where each kind of wait keeps its slots in a path (WAITS on), by the kind (``(src, dst)`` of
        # a flag, ``("x", op)`` of a cross-core wait) and by a wait's own flag ``(src, dst, id)``
        # (what a wait carries: no tuple made per crossing to look it up)
        self.wait_slots: dict[tuple, int] = {}
        self.wait_kinds: dict[tuple, int] = {}

    def wait_slot(self, flag: tuple) -> int:
        """The offset in a path of the slots of ``flag``'s kind of wait (made when first crossed)."""
        kind = (flag[0], flag[1])
        slot = self.wait_kinds.get(kind)
        if slot is None:
            slot = self.wait_kinds[kind] = WAITS + 4 * len(self.wait_kinds)
        self.wait_slots[flag] = slot
        return slot

    def waits_of(self, path: list) -> dict[tuple, list[int]]:
        """The waits ``path`` crossed: kind -> [blocked cycles, latest blocked cycle, first line, last line]."""
        return {kind: path[i:i + 4] for kind, i in self.wait_kinds.items() if i + 1 < len(path) and path[i + 1]}

    def _new_state(self, core) -> _CoreState:
        """The state of a core seen for the first time."""
        state = self.cores[id(core)] = _CoreState(core.scalar.pending_marks, self.cores)
        return state

    def consume(self, ins: Instr) -> None:
        """One instruction (:meth:`consume_batch` of one)."""
        self.consume_batch((ins,))

    def consume_batch(self, batch) -> None:  # noqa: C901 - the per-instruction path, inline on purpose
        """Each instruction of ``batch`` in turn (in start order): its path up to its start.

        One call per recorder drain, not per instruction: the loop keeps the current core's state
        and the scalar-unit record that completed last (and when) in local names. A pipe record
        updates no "completed last" of its own: that is worked out when asked, from the pipes'
        recent instructions, which always hold it (:meth:`last`, :meth:`_CoreState.latest`)."""
        core = self._core
        state = self._state
        tracks = state.tracks if state is not None else None
        states = self.cores
        wait_slots = self.wait_slots
        last = self.s_last
        last_done = -1 if last is None else last.done
        for ins in batch:
            if ins.core is not core:  # on a chip, consecutive records are often of other cores
                core = ins.core
                state = states.get(id(core)) or self._new_state(core)
                tracks = state.tracks
            start = ins.start
            if state.draining and state.draining[0].end < start:
                state.settle(start)
            try:
                track = tracks[ins.pipe]
            except KeyError:  # the pipe's first instruction
                track = state.track(ins.pipe)
            kind = ins.kind
            if track is None:  # the scalar unit's
                if state.marks:  # the stalls handed on as marks before this one
                    state.take_marks(start, ins.seq)
                done = ins.done
                if kind == XWAIT:
                    flag = ins.flag
                    made = flag.made_by if flag.__class__ is QueueRoom else None
                    if made is not None and made.path is not None:
                        # a stall on a full issue queue: its path is worked out if a later question
                        # asks (_until; it depends on ``made`` and its own start alone): most never are
                        ins.path = _ROOM
                    else:
                        ins.path = self._path_to_start(ins, state)
                elif kind == BARRIER:  # a full barrier: waited for the pipes to drain
                    state.begin_drain(ins)
                else:
                    ins.path = self._path_to_start(ins, state)
                if kind == BARRIER or kind == WAIT or kind == XWAIT:  # the scalar unit waited: later issues follow it
                    syncs = state.s_syncs
                    if syncs and syncs[-1].end <= start:  # state.add_sync, inline: only the latest stays
                        del syncs[:-1]
                        syncs.append(ins)
                    else:
                        state.add_sync(ins)
                if done >= last_done and (done > last_done or ins.seq > last.seq):
                    last = ins
                    last_done = done
                continue
            if kind == WAIT and start > ins.wait_start:  # a wait that blocked its pipe (else: the usual case)
                setter = ins.released_by
                wait_start = ins.wait_start
                if setter.__class__ is Instr and setter.kind == SET and setter.path is not None:
                    # a wait released by a set (_path_to_start, inline): the set's path, the cycles
                    # from the set to the wait's start, and the wait crossed (in place: one copy)
                    s_start = setter.start
                    path = setter.path
                    if path.__class__ is tuple:  # a set on a pipe: its pipe path as a list of one's own (_until, inline)
                        base, work, latency, sync = path
                        w, lat, syn = PIPE_SLOTS[setter.pipe]
                        path = base.copy()
                        path[w] = work
                        path[lat] = latency
                        path[syn] = sync + (start - s_start) if start > s_start else sync
                    else:
                        path = path.copy()
                        if start > s_start:  # up to the set's end, then on to the wait's start: one slot
                            path[SYNC[setter.pipe]] += start - s_start
                    loc = ins.loc
                    _cross(path, wait_slots.get(ins.flag) or self.wait_slot(ins.flag), wait_start, start,
                           loc.line if loc else 0)
                    ins.path = (path, path[track.work], path[track.latency], path[track.sync])  # _pipe_path
                else:
                    ins.path = _pipe_path(self._path_to_start(ins, state), track)
            elif kind == XWAIT:
                ins.path = _pipe_path(self._path_to_start(ins, state), track)
            else:
                # the usual case, inline: the pipe's previous instruction released it (what the
                # search would answer for ``start``, when the last one seen released the pipe then);
                # a wait that did not block is one too (_path_to_start asks its releaser only when it
                # blocked: the general route for ~130 waits per run of the stream kernel, -0.2 M)
                pred = track.last
                if pred is None or pred.end != start and pred.done != start:
                    pred = track.released_at(start)
                if pred is None:
                    ins.path = _pipe_path(self._path_to_start(ins, state), track)
                else:  # _until(pred, start), inline, on the pipe path: the base shared, no list copied
                    path = pred.path
                    p_start = pred.start
                    if pred.kind == OP:  # its work, then its results in flight
                        p_end = pred.end
                        if p_end >= start:  # still working at this start (or released the pipe then)
                            if start > p_start:
                                base, work, latency, sync = path
                                path = (base, work + (start - p_start), latency, sync)
                        else:
                            base, work, latency, sync = path
                            if p_end > p_start:
                                work += p_end - p_start
                            path = (base, work, latency + (start - p_end), sync)
                    elif start > p_start:
                        base, work, latency, sync = path
                        path = (base, work, latency, sync + (start - p_start))
                    ins.path = path
            track.recent.append(ins)  # the ones released before this start go once per batch (trim)
            track.last = ins
            if state.draining:
                state.note_drained(ins)
        self.s_last = last
        self._core, self._state = core, state
        for each in states.values():  # the recent instructions released before their pipe's latest start go
            for track in each.pipes.values():
                if len(track.recent) > 1:
                    track.trim()
            if each.marks:  # and the stalls handed on as marks before the batch's last record are taken
                each.take_marks(ins.start, ins.seq)

    def _path_to_start(self, ins: Instr, state: _CoreState) -> list:
        start = ins.start
        if ins.kind == XWAIT and isinstance(ins.flag, QueueRoom):
            # the scalar unit stalled on a full issue queue: it went on when that pipe took its next
            # instruction, right after starting (or finishing a wait or set) ``made_by``
            made = ins.flag.made_by
            if made is not None and made.path is not None:
                return _room_path(ins, start)
        if ins.kind in (WAIT, XWAIT) and ins.released_by is not None and start > ins.wait_start:
            released = self._releaser(ins)
            if released is not None:
                setter, ts = released
                flag = ins.flag if ins.kind == WAIT else ("x", ins.name)
                line = ins.loc.line if ins.loc else 0
                return _waited(_plus(_until(setter, ts), SYNC[setter.pipe], start - ts), self.wait_slot(flag),
                               ins.wait_start, start, line)
        if ins.pipe != "S":
            track = state.pipes.get(ins.pipe)
            pred = track.released_at(start) if track else None
            if pred is not None:
                return _until(pred, start)
        if state.marks:  # the stalls handed on as marks before this instruction
            state.take_marks(start, ins.seq)
        return state.scalar_path(start)  # issued late: the scalar unit was busy up to here

    @staticmethod
    def _releaser(ins: Instr) -> tuple[Instr, int] | None:
        """The instruction whose release let the wait go (the last of several) and when it did."""
        r = ins.released_by
        best = None
        for node in r if isinstance(r, list) else [r]:
            if node.path is None:  # not seen by the path (yet)
                continue
            when = min(node.done if (ins.kind == XWAIT and node.kind == OP) else node.end, ins.start)
            if best is None or when > best[1]:
                best = (node, when)
        return best

    def last(self) -> Instr | StallMark | None:
        """The instruction seen so far that completed last (of those that completed together, the
        one recorded last): the scalar unit's (kept as the records go), a stall handed on as a mark,
        or one of a pipe's recent instructions (a trim drops only instructions that completed before
        a later one of their pipe completed)."""
        best = self.s_last
        for state in self.cores.values():
            nodes = [node for track in state.pipes.values() for node in track.recent]
            if state.last_mark is not None:
                nodes.append(state.last_mark)
            for node in nodes:
                if best is None or (node.done, node.seq) > (best.done, best.seq):
                    best = node
        return best

    def finish(self) -> None:
        """Take the stalls handed on as marks still left; the rest waits for the makespan (:meth:`result`)."""
        for state in self.cores.values():
            state.take_marks(float("inf"), float("inf"))

    def result(self, makespan: int, held: dict[str, tuple[float, str, int]] | None = None) -> Bottleneck:
        """The path summed up to ``makespan`` and its verdict; ``held``: what the shared memory
        system held back per DMA pipe (:attr:`Bottleneck.held`)."""
        b = Bottleneck(makespan=makespan, held=held or {})
        if makespan <= 0:
            b.text = "no instructions ran"
            return b
        last = self.last()
        if last is None:  # no pipe instruction and no scalar sync op: the scalar unit's own work (scalar
            path = _plus(EMPTY, WORK["S"], makespan)  # ops, loops) took the whole makespan (red team 14)
        else:
            path = _plus(_until(last, min(makespan, last.done)), SYNC["S"], makespan - last.done)
        for (what, pipe), i in SLOT.items():
            if path[i] > 0:
                b.charged[(what, pipe)] = path[i]
        b.waits = self.waits_of(path)
        _verdict(b)
        return b


def _verdict(b: Bottleneck) -> None:
    """The verdict's kind and text, then what the block scheduler's dispatch took (:func:`_dispatch`)."""
    _bound(b)
    _dispatch(b)


def _dispatch(b: Bottleneck) -> None:
    """Runs in waves: the block scheduler dispatching the blocks of later waves (``launch_block`` each)
    is on the critical path between them. At least half of the makespan is ``dispatch-bound`` (many
    short blocks); any share of it is named after the verdict, so a user sees why waves of short
    blocks cost more than their work."""
    cycles = b.charged.get(("dispatch", "chip"), 0)
    if not cycles or not b.makespan:
        return
    share = cycles / b.makespan
    if share >= BOUND_SHARE:  # (no pipe can then hold more than the other half: the slots sum to the makespan)
        b.kind = "dispatch-bound"
        b.text = (f"dispatch-bound: {share:.0%} of the makespan is the block scheduler dispatching the blocks "
                  f"of later waves on the critical path (largest pipe share: {b.pipe} {_unbound(b.share(b.pipe))})")
        return
    b.text += f"; block dispatch between waves: {share:.0%}"


def _held(b: Bottleneck, pipe: str) -> str:
    """What the verdict adds when the shared HBM or L2 slowed the bounding pipe's transfers below
    their own per-core peak: the rate the memory system granted and why (else nothing: a core
    streaming at its own peak, its port's on HBM, reads as before)."""
    held = b.held.get(pipe)
    if held is None:
        return ""
    rate, medium, cores = held
    streams = f"{cores} core{'s' if cores != 1 else ''} streaming"
    return f", at {rate:.1f} B/cycle per core: shared {'HBM' if medium == 'hbm' else 'L2'} bandwidth ({streams})"


def _unbound(share: float) -> str:
    """A share below :data:`BOUND_SHARE` as a percentage that stays below it (49.6% is '49%', not
    the '50%' that bounds)."""
    pct = f"{share:.0%}"
    return f"{int(BOUND_SHARE * 100) - 1}%" if share < BOUND_SHARE and pct == f"{BOUND_SHARE:.0%}" else pct


STAGE_SHARE = 0.1  # a pipe named among the stages of a latency-bound path: at least this share of it


def _stages(b: Bottleneck, top: str) -> str:
    """The pipes whose work makes up a path no pipe bounds, largest first (each at least
    :data:`STAGE_SHARE`; the largest always). A wait's cycles are other pipes' work on the path (the
    pipe waiting is off it meanwhile): 'waiting on V->MTE3 flags 64%' alone read as if the flag cost
    that time, when MTE2 and V worked it, one stage after the other (red team 14)."""
    pipes = sorted({p for (_, p) in b.charged if p != "chip"}, key=lambda p: (-b.share(p), p))
    named = [p for p in pipes if p == top or b.share(p) >= STAGE_SHARE]
    return ", ".join(f"{p} {_unbound(b.share(p))}" for p in named)


def _bound(b: Bottleneck) -> None:
    """The verdict: a pipe bounding the kernel, the scalar unit's sync ops, else the wait the path
    crosses longest (issue 8 item 5) with the pipes whose work the path runs through meanwhile. A
    pipe share that does not bound is shown below the bound's threshold even where it rounds to it:
    '(largest pipe share: MTE2 50%)' read as if MTE2 did half of the work and still did not bound."""
    pipes = {p for (_, p) in b.charged if p != "chip"}
    top = max(sorted(pipes), key=b.share) if pipes else "S"
    b.pipe = top
    share = b.share(top)
    if share >= BOUND_SHARE:
        if top == "S":
            b.kind = "issue-bound"
            b.text = f"issue-bound: {share:.0%} of the makespan is the scalar unit issuing on the critical path"
        else:
            b.kind = f"{top}-bound"
            b.text = f"{top}-bound: {share:.0%} of the makespan is {top} work on the critical path" + _held(b, top)
        return
    sync_s = b.charged.get(("sync", "S"), 0) / b.makespan if b.makespan else 0.0
    if sync_s >= BOUND_SHARE:  # the scalar unit's own sync ops (full barriers, its flag ops) hold it up
        b.kind = "sync-bound"
        b.text = (f"sync-bound: {sync_s:.0%} of the makespan is the scalar unit's sync ops (full barriers, "
                  f"flag ops on S) on the critical path (largest pipe share: {top} {_unbound(share)})")
        return
    b.kind = "latency-bound"
    if b.waits:
        flag = max(sorted(b.waits), key=b.wait_share)
        _, _, first, last = b.waits[flag]
        where = ""
        if first:
            where = f" at line {first}" if first == last else f" at lines {first}-{last}"
        what = flag[1] if flag[0] == "x" else f"{flag[0]}->{flag[1]} flags"
        b.text = (f"latency-bound: {b.wait_share(flag):.0%} of the makespan waiting on {what}{where} "
                  f"(pipe shares on the critical path: {_stages(b, top)})")
        return
    b.text = f"latency-bound: no pipe works half of the makespan (pipe shares on the critical path: {_stages(b, top)})"


__all__ = ["BOUND_SHARE", "Bottleneck", "CriticalPath"]
