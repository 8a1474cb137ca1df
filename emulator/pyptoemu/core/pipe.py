"""Pipes: in-order instruction queues that run concurrently, and the flags between them.

Each pipe is one long-lived SimPy process over a ``deque``. An instruction starts when it reaches
the head of its queue and the scalar unit has issued it (``issue`` cycle), reads its inputs at start,
holds the pipe for ``occupancy`` cycles, and its writes land ``latency`` cycles after start. Writes
are not SimPy events: they go into one commit heap that is flushed up to the current cycle before
anything reads memory, so a pipe costs one SimPy event per instruction (measured in
benchmarks/emulator_speed.py). On a pipe the machine declares in order, completions never overtake
each other; the vector pipe is not in order, so a dependent vector instruction without a barrier
reads stale data, as on hardware.
"""

# ruff: noqa: PLR1730, FURB136 - per-instruction code compares where it could call max() (a call costs
# several comparisons in CPython)
from __future__ import annotations

import heapq
import sys
from collections import deque
from heapq import heappush
from typing import Protocol

import simpy
from simpy.events import NORMAL, PENDING

from pyptoemu.errors import Loc

OP, SET, WAIT, BARRIER = 0, 1, 2, 3
# Cross-core kinds (pyptoemu.core.crosscore): XSET raises a cross-core signal once every earlier
# instruction of its pipe has completed (sync.set, the release of a FIFO slot); XWAIT blocks its
# pipe until a cross-core condition holds (sync.wait, a free FIFO slot to push into). Their ``flag``
# is a :class:`Gate`; their ``occupancy`` is their own cost in cycles.
XSET, XWAIT = 4, 5


class BoundOp(Protocol):
    """What a tile instruction runs (``pyptoemu.core.tileop.TileOpBinding``): ``start`` when its pipe
    starts it (reads, computes), ``commit`` when its writes land. ``start`` returns what ``commit``
    applies, or None when committing would change nothing (a timing-only instruction whose writes
    are noted already): then the pipe queues no commit at all."""

    def start(self, instr: Instr) -> list | None: ...

    def commit(self, instr: Instr, results: list) -> None: ...


class Gate(Protocol):
    """A cross-core condition a pipe (XWAIT) or the scalar unit waits on, or a signal an XSET
    raises. ``take`` consumes it and returns the instructions whose completion released the
    waiter (the happens-before edges the race detector follows)."""

    def ready(self) -> bool: ...

    def event(self) -> simpy.Event:
        """An event fired when the condition may hold: a new one per call, only its caller waits
        on it (a pipe leaps on that: see ``LEAP``)."""
        ...

    def take(self, waiter: Instr) -> list: ...

    def fire(self, setter: Instr) -> None: ...

    def describe(self) -> str: ...


class QueueRoom:
    """What a scalar unit stalled on a full issue queue waited for: room in ``pipe``'s queue, made
    when the pipe took its next instruction after ``made_by`` (the instruction it had just started,
    or None). The ``flag`` of the stall's record (an ``XWAIT`` on S with no releaser: the stall
    orders no memory access, so the race detector draws no edge from it; the critical path follows
    ``made_by``)."""

    __slots__ = ("made_by", "pipe")

    def __init__(self, pipe: Pipe, made_by: Instr | None) -> None:
        self.pipe = pipe
        self.made_by = made_by

    def describe(self) -> str:
        return f"(the {self.pipe.name} issue queue was full: {self.pipe.depth} entries)"


# A pipe that would sleep on its own timeout (its Tick) until a later cycle no event is due by
# sets the clock there itself and goes on: a leap. SimPy would pop that timeout next: the event heap
# holds nothing due by then, only an event can make anything else happen in between, and the event
# the pipe is running on has no other callback left to run at the earlier cycle (every event a pipe
# waits on is its own: its Tick, its idle wake, a Wake, a Gate's event made per waiter). So every
# process sees what it would have seen, in the same order; only the event ids the leaps do not take
# are not taken (ids order the events due at one cycle, and those keep their order). 848 of the
# 1798 Ticks of a run of the stream kernel (examples/double_buffer_1024.pto): 102.8 -> 99.7 M
# machine instructions per timing-only run (callgrind). False: every such wait is a timeout
# (tests/emulator/core/test_leap.py compares the two).
LEAP = True


class Wake(simpy.Event):
    """An event its waiter sleeps on until the cycle it must wake at is known (``wake_in``)."""

    __slots__ = ()

    def wake_in(self, delay: int) -> None:
        """Fire ``delay`` cycles from now, as a ``Timeout`` made now would (one event in all)."""
        self._ok = True
        self._value = None
        self.env.schedule(self, simpy.events.NORMAL, delay)


class Tick(simpy.Event):
    """A pipe's own event: the one it waits on, fired again for each wait (:meth:`Pipe.run`). As
    a timeout (the start of a tile instruction or a wait, the end of a set: ~1800 per run of the
    stream kernel, examples/double_buffer_1024.pto, about half of them leaps that need no event:
    see ``LEAP``) where a ``Timeout`` made per wait costs an object and two calls more; as the event a set of the flag it waits for fires (~770 per run:
    :class:`Flags` takes it as its waiter). Only its pipe waits on it, and only once it has fired:
    re-armed, it is a new event, processed as one would be (value None)."""

    __slots__ = ()

    def __init__(self, env: simpy.Environment) -> None:
        super().__init__(env)
        self._ok = True
        self._value = None


class Instr:
    """One issued instruction (or sync op) in a pipe queue: made by :func:`make_instr`, which says
    what each field holds.

    No ``__init__``: calling a class whose ``__init__`` is Python code costs CPython 3.11 a C-level
    call into a new interpreter frame (``slot_tp_init``), where a Python function called from Python
    runs in the caller's: ``Instr()`` (the default ``__init__``, in C) filled in by :func:`make_instr`
    costs about 800 fewer machine instructions per instruction than an ``__init__`` making the same
    stores (callgrind; 2820 instructions per run of the stream kernel, examples/double_buffer_1024.pto)."""

    __slots__ = (
        "bound",
        "core",
        "done",
        "end",
        "flag",
        "iseq",
        "issue",
        "key",
        "kind",
        "latency",
        "loc",
        "low",
        "name",
        "nbytes",
        "occupancy",
        "operands",
        "path",
        "pidx",
        "pipe",
        "reads",
        "released_by",
        "sepoch",
        "seq",
        "stall_lag",
        "stall_made_by",
        "stall_taken",
        "stall_watch",
        "start",
        "transfer",
        "vc",
        "wait_start",
        "writes",
    )


def make_instr(kind: int, name: str, loc: Loc, pipe: str, issue: int, occupancy: int = 0, latency: int = 0,
               bound: BoundOp | None = None, reads: tuple = (), writes: tuple = (), flag: tuple | None = None,
               operands: list | tuple = (), nbytes: int = 0, transfer: tuple | None = None, key: object = None) -> Instr:
    """A new instruction (every field set: a slot is read before it is written on some path)."""
    ins = Instr()
    ins.kind = kind
    ins.name = name
    ins.loc = loc
    ins.pipe = pipe
    ins.issue = issue
    ins.occupancy = occupancy
    ins.latency = latency
    ins.bound = bound  # a tile instruction's binding: its start and commit steps
    ins.reads = reads  # ((buffer name, lo byte, hi byte), ...)
    ins.writes = writes
    ins.flag = flag  # (src pipe, dst pipe, id) for SET / WAIT
    ins.operands = operands  # a tile instruction's operands as issued (tileop.OperandSnap)
    ins.nbytes = nbytes
    ins.transfer = transfer  # a GM DMA: (traffic bytes, peak bytes/cycle) for the shared memory system
    ins.start = -1
    ins.end = -1  # pipe released (start + occupancy)
    ins.done = -1  # writes landed (completion)
    ins.seq = -1
    # for WAIT: the SET instruction that released it; for a block-start barrier on S: the core of its
    # unit that drained last (AICore.start_block)
    ins.released_by = None
    ins.wait_start = -1
    ins.pidx = -1  # position in its pipe's issue order
    ins.sepoch = 0  # scalar-unit sync epoch at issue (happens-before from the scalar unit)
    ins.iseq = 0  # program (issue) order across all pipes
    ins.core = None  # the AICore that ran it (set when recorded)
    ins.vc = None  # its vector clock at start, once the race detector has seen it (check/races.py)
    ins.path = None  # the critical path up to its start, once the path has seen it (trace/bottleneck.py)
    ins.key = key  # a timing-only tile instruction: what its shape check is remembered by (tileop.py)
    # ``low`` (set by ScalarUnit.issue): its issue cycle less the delay of the stalls before it not
    # resolved when it issued (``issue`` is then the latest of them, a DeferredStall, until its pipe
    # reaches it); ``stall_*``: the stall it held, if it did (see DeferredStall)
    return ins


# A stall of the scalar unit on a full issue queue, not resolved yet (``ScalarUnit.issue``): kept on
# the instruction it held, in its ``stall_*`` fields, so a deferred stall is an :class:`Instr`. One
# is made per issue that overfills a queue (2648 per run of the stream kernel,
# examples/double_buffer_1024.pto: nearly every issue once the queues are full); a list per stall
# cost its making and dropping (~800 machine instructions) and an index lookup per field read:
# 112.76 -> 111.14 M machine instructions per timing-only run with it on the instruction (callgrind).
#
# The held instruction went into its pipe's queue over its depth; nothing issued after it may issue
# before the pipe takes the instruction ``depth`` places ahead of it off its queue (the stall's
# maker: ``Pipe.run`` finds the held instruction ``depth - 1`` places behind it in the queue then).
# That is when the stall ends: the oldest is resolved at once (``ScalarUnit.resolve``), any other
# gets ``stall_taken``, the cycle, and ``stall_made_by``, what the pipe had just started, and is
# resolved with the older ones. Its ``low`` is the scalar clock after issuing it as it stood with
# the earlier stalls unresolved. Resolved, ``stall_lag`` is the delay of every stall up to this one:
# what the scalar unit issued after it and before the next one has ``issue`` this stall until then
# (the next stall itself gets its issue cycle then, from ``resolve``), and its issue cycle is its
# ``low`` plus ``stall_lag`` (its program order, ``iseq``, is final when issued: a stall's record
# takes no number of its own). ``stall_watch`` is None until something waits for the resolution:
# then a pair of lists (:func:`watch`), the (instruction or None, Wake) of whoever waits (a pipe, to
# wake at that instruction's issue cycle; the scalar unit) and allocation counters for the trace,
# timed the same way (one field for both: the resolution of each stall checks one, not two). The
# ``stall_*`` fields are set when the instruction holds a stall (``ScalarUnit.issue``), not
# otherwise.
DeferredStall = Instr  # the class of a deferred stall (an ``Instr.issue`` that is not a cycle yet)


def watch(stall: Instr) -> tuple[list, list]:
    """The waiters and the allocation counters of ``stall`` (made at the first of either)."""
    pair = stall.stall_watch
    if pair is None:
        pair = stall.stall_watch = ([], [])
    return pair


def wake_at(stall: Instr, instr: Instr | None, env: simpy.Environment) -> Wake:
    """An event fired at ``instr``'s issue cycle once ``stall`` is resolved (``None``: at the
    resolution)."""
    event = Wake(env)
    watch(stall)[0].append((instr, event))
    return event


def is_issued(ins: Instr) -> bool:
    """False for an instruction the scalar unit put in a queue after a stall that is not resolved
    yet: on hardware it has not been issued (the scalar unit is still stalled before it)."""
    stall = ins.issue
    return stall.__class__ is not DeferredStall or stall.stall_lag is not None


class CommitQueue:
    """Pending writes ordered by completion cycle (then issue order).

    Entries are ``[when, seq, instr, results]`` lists; ``take`` commits one early (an in-order pipe
    forwarding its own earlier results to a later instruction) and blanks it so ``flush`` skips it.
    An applied entry drops its results too: its pipe may hold the entry until its next instruction
    starts (on a chip, each core's last results would otherwise stay to the end of the run).
    """

    __slots__ = ("heap", "seq")

    def __init__(self) -> None:
        self.heap: list = []
        self.seq = 0

    def push(self, when: int, instr: Instr, results: list) -> list:
        self.seq += 1
        entry = [when, self.seq, instr, results]
        heapq.heappush(self.heap, entry)
        return entry

    @staticmethod
    def take(entry: list) -> None:
        instr = entry[2]
        if instr is not None:
            results = entry[3]
            entry[2] = entry[3] = None
            instr.bound.commit(instr, results)

    def flush(self, upto: float) -> None:
        heap = self.heap
        while heap and heap[0][0] <= upto:
            entry = heapq.heappop(heap)
            instr = entry[2]
            if instr is not None:
                results = entry[3]
                entry[2] = entry[3] = None  # applied: a later take() by its pipe must not apply it again
                instr.bound.commit(instr, results)


class Flags:
    """Binary flags per (src pipe, dst pipe, event id); a set wakes the waiter if there is one."""

    __slots__ = ("env", "observer", "state", "waiters")

    def __init__(self, env: simpy.Environment, observer) -> None:
        self.env = env
        self.state: dict[tuple, Instr] = {}  # flag -> the SET instr that set it (while set)
        self.waiters: dict[tuple, simpy.Event] = {}
        self.observer = observer  # receives double-set notices

    def set(self, flag: tuple, by: Instr) -> None:
        """``flag`` is set by ``by``; its waiter, if any, wakes now (``Pipe.run`` does the same inline
        for a pipe's set_flag)."""
        if flag in self.state:
            self.observer.double_set(flag, self.state[flag], by)
        self.state[flag] = by
        ev = self.waiters.pop(flag, None)
        if ev is not None:  # ev.succeed(), inline: SimPy's Event.succeed and Environment.schedule,
            ev._ok = True  # two calls less per set that wakes a waiter (~770 per run of the stream kernel)
            ev._value = None
            env = self.env
            heappush(env._queue, (env._now, NORMAL, next(env._eid), ev))

    def try_consume(self, flag: tuple) -> Instr | None:
        return self.state.pop(flag, None)

    def wait_event(self, flag: tuple) -> simpy.Event:
        ev = self.env.event()
        self.waiters[flag] = ev
        return ev


class Pipe:
    """One in-order queue (MTE1, MTE2, MTE3, V, M or FIX) as a SimPy process."""

    def __init__(self, core, name: str, in_order: bool, costs: dict, depth: int = 0):
        self.core = core
        self.env: simpy.Environment = core.env
        self.name = name
        self.in_order = in_order
        self.queue: deque[Instr] = deque()
        # Issue-queue depth: how many issued instructions may wait here for the pipe (0: no bound).
        # The scalar unit stalls while the queue is over it (ScalarUnit.issue): each deferred stall
        # on this queue ends when the pipe takes the instruction ``depth`` places ahead of it.
        self.depth = depth
        self.stall_above = depth or sys.maxsize  # the queue length an issue stalls over (one comparison)
        self.wake: simpy.Event | None = None
        self.idle_waiters: list[simpy.Event] = []
        self.current: Instr | None = None
        self.last_done = 0  # completion cycle of the latest instruction so far
        self.ready_at = 0  # the next instruction starts no earlier (after a wait or barrier)
        # In-order pipes see their own earlier results (hardware forwards them along the pipe):
        # the still-pending commits of this pipe, applied before the next instruction reads (a
        # list: appended and emptied whole, and an empty deque costs a 64-entry block per pipe).
        self.own_pending: list[list] = []
        self.busy = 0
        self.count = 0
        self.issued = 0  # instructions the scalar unit put in this queue so far (the next one's pidx)
        self.set_cost = int(costs["set_flag"])
        self.wait_cost = int(costs["wait_flag"])
        self.barrier_cost = int(costs["barrier_v"] if name == "V" else costs["barrier"])
        # On a chip, DMA pipes ask the shared memory system for bandwidth (pyptoemu.core.memsys).
        self.memsys = None
        self.commits: CommitQueue = core.commits
        self.record = core.recorder.record  # (core, instr): what AICore.record does, one call less per instruction
        self.tick = Tick(self.env)  # the event the pipe waits on, fired again for each wait
        self.process = self.env.process(self.run())

    def is_idle(self) -> bool:
        return not self.queue and self.current is None

    def idle_event(self) -> simpy.Event:
        ev = self.env.event()
        if self.is_idle():
            ev.succeed()
        else:
            self.idle_waiters.append(ev)
        return ev

    def run(self):  # noqa: C901 - the per-instruction loop, its common cases inline on purpose
        """The pipe's process: take the head of the queue and run it by its kind, forever.

        Tile instructions, sets, waits and barriers (nearly everything) run here, inline, and are
        recorded at the loop's tail: no call and no sub-generator per instruction, and one SimPy
        event at most per instruction (a tile instruction's occupancy needs none: see its case
        below). Cross-core waits and sets run in their own sub-generators, which record them."""
        env = self.env
        queue = self.queue
        flags = self.core.flags
        scalar = self.core.scalar
        deferred = scalar.deferred
        resolve = scalar.resolve
        tick = self.tick
        # SimPy's Environment.schedule inline (a push on its event heap with the next event id): a
        # pipe schedules its Tick ~1800 times per run of the stream kernel, a call saved each time
        timeline = env._queue
        event_ids = env._eid
        flag_state = flags.state
        consume = flag_state.pop  # Flags.try_consume: the setter of a flag, taken (a C call)
        take_waiter = flags.waiters.pop
        recorder = self.core.recorder
        held_append = recorder.held.append  # (the same list for the recorder's life)
        log = self.core.log if recorder.keep_log else None
        core = self.core
        set_cost = self.set_cost
        wait_cost = self.wait_cost
        barrier_cost = self.barrier_cost
        # what a tile instruction's start touches (see the OP case)
        commits = self.commits
        heap = commits.heap
        take = commits.take
        in_order = self.in_order
        own_pending = self.own_pending
        memsys = self.memsys  # (set by the core before anything runs)
        # SimPy time as this process sees it: it moves only across a yield (read after each, as the
        # ``Environment.now`` property returns it: ~800 property calls per run saved)
        now = env._now
        leap = LEAP
        # Taking an instruction off the queue ends the deferred stall of the one then at this index,
        # if the queue is that long: it went over the depth when issued (that one was still in), and
        # it holds a stall not resolved yet (one never is before it ends). Found so, by the length
        # (a C call), not marked on the instruction taken: per stall, no store at issue and none
        # when taken (callgrind, timing-only stream kernel, examples/double_buffer_1024.pto,
        # 2648 stalls per run: 94.9 -> 93.7 M machine instructions per run).
        held_at = self.stall_above - 1
        while True:
            if not queue:
                yield from self._idle()
                now = env._now
                continue
            ins = queue.popleft()
            if len(queue) > held_at:  # the scalar unit waits for a free entry: there is one now
                stall = queue[held_at]
                if deferred[0] is stall:  # the scalar unit's oldest: resolved now, and the taken ones after it
                    resolve(now, self.current)  # (now: an int, as every delay in a run is)
                else:  # resolved with the older ones: when it was taken, having just started what
                    stall.stall_taken = now
                    stall.stall_made_by = self.current
            self.current = ins
            issue = ins.issue
            if issue.__class__ is DeferredStall:  # issued after a stall that was not resolved then
                lag = issue.stall_lag
                if lag is None:  # nor is it now: wait for its issue cycle
                    yield wake_at(issue, ins, env)
                    now = env._now
                    lag = issue.stall_lag
                issue = ins.issue = ins.low + lag
            kind = ins.kind
            if kind == OP or kind == WAIT:
                # start: max(now, issue, ready_at), compared (a call of max() costs more)
                start = issue if issue > now else now
                ready_at = self.ready_at
                start = ready_at if ready_at > start else start
                if start > now:  # a timeout: the pipe's own, fired again (Tick), or a leap (see LEAP)
                    if not leap or timeline and timeline[0][0] <= start:
                        tick.callbacks = []
                        heappush(timeline, (start, NORMAL, next(event_ids), tick))
                        yield tick
                    else:
                        env._now = start
                    now = start
                if kind == OP:
                    # A tile instruction starts (inline: a call less per tile
                    # instruction): its reads happen now, after every write landed by now ...
                    if heap and heap[0][0] <= start:
                        commits.flush(start)
                    if in_order and own_pending:  # ... and this pipe's own earlier results (forwarded)
                        for entry in own_pending:
                            take(entry)
                        own_pending.clear()
                    results = ins.bound.start(ins)
                    if memsys is not None:
                        memsys.admit(core, ins, start)
                    # its writes are queued to land at completion; an in-order pipe's completions
                    # never overtake each other
                    done = start + ins.latency
                    last_done = self.last_done
                    if done > last_done:
                        self.last_done = done
                    elif in_order:
                        done = last_done
                    occupancy = ins.occupancy
                    ins.start = start
                    ins.done = done
                    # it holds the pipe for its occupancy, at no event: whatever comes next starts
                    # no earlier (a drain of the pipe waits for ready_at as for last_done); one int
                    # object for both (an addition and an int freed less per tile instruction)
                    ins.end = self.ready_at = start + occupancy
                    if results is not None:  # something to commit when its writes land
                        commits.seq += 1
                        entry = [done, commits.seq, ins, results]  # CommitQueue.push, inline
                        heappush(heap, entry)
                        if in_order:
                            own_pending.append(entry)
                    self.busy += occupancy
                    self.count += 1
                else:
                    ins.wait_start = start
                    setter = consume(ins.flag, None)
                    if setter is None:  # wait for the set (Flags.set fires the pipe's own event, re-armed)
                        tick.callbacks = []
                        tick._value = PENDING
                        flags.waiters[ins.flag] = tick
                        yield tick
                        now = env._now
                        setter = consume(ins.flag, None)
                    # _end_wait, inline (a call less per wait): consumed now, its own cost folded into ready_at
                    ins.released_by = setter
                    ins.start = now
                    end = ins.end = ins.done = self.ready_at = now + wait_cost
                    self.busy += wait_cost
                    if end > self.last_done:
                        self.last_done = end
            elif kind == SET:  # fires once every earlier instruction of this pipe has completed
                # once issued and every earlier instruction completed: max(now, issue, last_done, ready_at),
                # compared (a call of max() costs more)
                start = issue if issue > now else now
                last_done = self.last_done
                start = last_done if last_done > start else start
                ready_at = self.ready_at
                start = ready_at if ready_at > start else start
                ins.start = start
                end = ins.end = ins.done = start + set_cost
                if end > now:  # one event for the drain and the set itself, or a leap (see LEAP)
                    if not leap or timeline and timeline[0][0] <= end:
                        tick.callbacks = []
                        heappush(timeline, (end, NORMAL, next(event_ids), tick))
                        yield tick
                    else:
                        env._now = end
                    now = end
                self.busy += set_cost
                # Flags.set, inline (a call less per set: 768 per run of the stream kernel)
                flag = ins.flag
                if flag in flag_state:
                    flags.observer.double_set(flag, flag_state[flag], ins)
                flag_state[flag] = ins
                waiter = take_waiter(flag, None)
                if waiter is not None:  # its waiter (a pipe's Tick, the scalar unit's event) succeeds now
                    waiter._ok = True
                    waiter._value = None
                    heappush(timeline, (now, NORMAL, next(event_ids), waiter))
            elif kind == XWAIT:  # (recorded by the helper)
                yield from self._run_xwait(ins)
                now = env._now
                continue
            elif kind == XSET:
                yield from self._run_xset(ins)
                now = env._now
                continue
            else:  # a barrier: what comes after it starts once every earlier instruction completed (no event)
                # (inline, as a set: a call less per barrier) max(now, issue, last_done, ready_at)
                start = issue if issue > now else now
                last_done = self.last_done
                start = last_done if last_done > start else start
                ready_at = self.ready_at
                start = ready_at if ready_at > start else start
                ins.start = start
                # it starts after every earlier completion: its own is the pipe's last
                ins.end = ins.done = self.ready_at = self.last_done = start + barrier_cost
                self.busy += barrier_cost
            # recorded: Recorder.record, inline (a Python call less per instruction, 2820 per run of
            # the stream kernel, examples/double_buffer_1024.pto: 89.46 -> 88.34 M machine
            # instructions per timing-only run, callgrind)
            if log is not None:  # keep_log (Recorder._record_and_log)
                log.append(ins)
            seq = recorder.seq = recorder.seq + 1
            ins.seq = seq
            ins.core = core
            held_append(ins)
            if seq >= recorder.drain_at:
                recorder.drain()

    def _idle(self):
        """The queue is empty: release whoever waits for this pipe to drain, sleep until a push."""
        self.current = None
        if self.idle_waiters:
            for ev in self.idle_waiters:
                ev.succeed()
            self.idle_waiters = []
        self.wake = self.env.event()
        yield self.wake

    def _run_xwait(self, ins: Instr):
        """A cross-core wait (sync.wait, a full FIFO): blocks the pipe until its gate opens."""
        env = self.env
        now = env.now
        start = max(now, ins.issue, self.ready_at)
        if start > now:
            yield env.timeout(start - now)
        ins.wait_start = start
        gate = ins.flag
        while not gate.ready():
            yield gate.event()
        ins.released_by = gate.take(ins)
        ins.start = int(env.now)
        ins.end = ins.done = self.ready_at = ins.start + ins.occupancy
        self.busy += ins.occupancy
        self.last_done = max(self.last_done, ins.done)
        self.record(self.core, ins)

    def _run_xset(self, ins: Instr):
        """A cross-core signal (sync.set, a FIFO slot release): fires once every earlier
        instruction of this pipe has completed."""
        now = self.env.now
        start = max(now, ins.issue, self.last_done, self.ready_at)
        ins.start = start
        ins.end = ins.done = start + ins.occupancy
        if ins.end > now:
            yield self.env.timeout(ins.end - now)
        self.busy += ins.occupancy
        ins.flag.fire(ins)
        self.record(self.core, ins)
