"""The scalar unit: walks a function in program order, evaluates control flow, issues tile ops.

Each AST op is bound once (``pyptoemu.core.binding`` picks its lowering) into a step that reads SSA
values from the frame, does its work and returns ``None`` or, when it has to wait for simulated time
(waits on the S pipe, full barriers, nested regions), a generator. The hot loop therefore does no
YAML or string lookups. This module sits below the lowerings: it is handed the binder, it never
imports one (scalar unit <- lowerings <- binding is a one-way chain).

The scalar unit keeps its own clock (``vclock``): issuing is charged there without a SimPy event
per op; each issued instruction carries its issue cycle and its pipe starts it no earlier. The
scalar process only synchronises with SimPy time when it must observe pipe state.

A full issue queue stalls the scalar unit until its pipe takes an instruction (a deferred stall,
``pyptoemu.core.pipe.DeferredStall``: kept on the instruction that went over the depth).
How long is not known when the scalar unit gets there, but it does not need to be: the clock after
the stall is ``max(clock, cycle the pipe takes it)``, whatever happens in between. So the scalar unit
defers the stall and goes on issuing; what it issues meanwhile carries no issue cycle yet (its
``issue`` is the stall) and a pipe that reaches such an instruction waits until the stall is resolved. This is exact (the
schedule is that of a scalar unit that waits at each stall) and lets the scalar unit issue long
bursts instead of alternating with the pipes every few instructions (measured in
benchmarks/speed_vs_simpy.py). Anything that observes SimPy time first settles every deferred stall.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from operator import itemgetter
from typing import Any, NamedTuple

from ptoisa.text import ast as A
from pyptoemu.core.pipe import (
    SET,
    XWAIT,
    BoundOp,
    Instr,
    QueueRoom,
    make_instr,
    wake_at,
    watch,
)
from pyptoemu.core.recorder import EpochLog
from pyptoemu.errors import InternalError, Loc, PtoError, ResourceError, StepLimitError, VerifyError

# How many stalls the scalar unit may defer before it waits for them to end: bounds how many issued
# instructions a run holds at once (memory), not when anything happens (the schedule is exact).
MAX_DEFERRED_STALLS = 256

Step = Callable[[dict], Any]  # one op's work per execution: None, or a generator that waits
Binder = Callable[["ScalarUnit", A.Op], Step]  # binds any op (pyptoemu.core.binding.bind_op)
Lowering = Callable[["ScalarUnit", A.Op], Step]  # binds the ops of one kind


class BoundRegion(NamedTuple):
    """A region bound once: (op, step) in program order, up to the first op whose binding failed,
    and that failure (raised when execution reaches it), or None."""

    steps: tuple[tuple[A.Op, Step], ...]
    error: Exception | None


class BlockedIssue(NamedTuple):
    """What a scalar unit found deadlocked on a full issue queue holds: ``held``, which the
    ``target`` pipe's queue has no room for."""

    target: Any  # pyptoemu.core.pipe.Pipe
    held: Instr


class Return(Exception):
    """Unwinds a function body at ``func.return``."""

    def __init__(self, values: list):
        self.values = values


class FlagOrder:
    """Flags are binary (§6.2): a second set of a flag before a wait consumes the first is
    illegal. Checked in program order, so it does not depend on how the pipes happen to run:
    the balance of sets minus waits issued so far may go below zero (a wait queued before the
    set that releases it) but a set must not find it above zero. One record per flag, so a flag
    op bound to a fixed flag updates it without a lookup."""

    __slots__ = ("balance", "core", "flag", "last")

    def __init__(self, flag: tuple, core) -> None:
        self.flag = flag
        self.core = core
        self.balance = 0  # sets minus waits issued so far
        self.last: Instr | None = None  # the last set issued

    def on_set(self, instr: Instr) -> None:
        if self.balance >= 1 and self.last is not None:
            self.core.findings.double_set(self.flag, self.last, instr)
        self.balance += 1
        self.last = instr

    def on_wait(self, instr: Instr) -> None:
        self.balance -= 1


class ScalarUnit:
    # Slots: the unit has more attributes than CPython 3.11 keeps in an instance's inline values
    # (30), so without them every ``self.x`` on the issue path is a dictionary lookup by hint
    # (LOAD_ATTR_WITH_HINT), with them an offset (LOAD_ATTR_SLOT). Callgrind, timing-only stream
    # kernel (examples/double_buffer_1024.pto): 109.1 -> 107.7 M machine instructions per run.
    __slots__ = (
        "_span_start",
        "arith_cost",
        "barrier_all_cost",
        "bind",
        "core",
        "deferred",
        "epochs",
        "flag_orders",
        "functions",
        "isa",
        "issue_cost",
        "issued_total",
        "keep_spans",
        "lag",
        "machine",
        "mark_list",
        "max_steps",
        "module",
        "own_busy",
        "own_count",
        "pending_marks",
        "pending_start",
        "record",
        "recorder",
        "regions",
        "s_accesses",
        "s_spans",
        "set_cost",
        "stall_marks",
        "stalls",
        "step_count",
        "steps",
        "vclock",
        "wait_cost",
    )

    def __init__(self, core, bind: Binder) -> None:
        self.core = core
        self.bind = bind  # op -> its step (pyptoemu.core.binding.bind_op)
        self.module: A.Module = core.module
        self.isa = core.isa
        self.machine = core.machine
        costs = self.machine.costs
        self.issue_cost = int(costs["scalar_issue"])
        self.arith_cost = int(costs["scalar_arith"])
        self.set_cost = int(costs["set_flag"])
        self.wait_cost = int(costs["wait_flag"])
        self.barrier_all_cost = int(costs["barrier_all"])
        self.vclock = 0
        # cycles and instructions of the scalar unit's own work (scalar ops, its waits and syncs): with
        # the issues (each ``issue_cost``, one per pipe's ``issued``), its ``busy`` and ``count``
        self.own_busy = 0
        self.own_count = 0
        # program order across pipes, for naming races in program order: the number of the last
        # instruction issued (a stall takes none: its record's ``iseq`` is a half, see _record_stall)
        self.issued_total = 0
        self.flag_orders: dict[tuple, FlagOrder] = {}  # flag -> its sets and waits issued so far
        self.steps: dict[A.Op, Step] = {}
        self.regions: dict[A.Region, BoundRegion] = {}  # each region's ops bound to their steps once
        self.functions = {f.name: f for f in self.module.functions}
        self.max_steps = int(core.max_steps)
        self.step_count = 0
        self.s_spans: list[tuple[int, int]] = []  # scalar activity for the trace (kept with keep_log)
        self.keep_spans = bool(core.side_logs)
        # the start of a scalar-unit record in flight (a full barrier draining, a tile op on PIPE_S
        # waiting for its latency): the recorder holds later records until it is recorded
        self.pending_start: int | None = None
        self.s_accesses = 0  # memory accesses made by the scalar unit itself
        # Scalar sync points in program order: ("wait", instr) after a wait_flag on PIPE_S,
        # ("all", issued counts) after a full barrier. Instructions record how many preceded them.
        self.epochs = EpochLog()
        self._span_start = 0
        self.stalls = 0  # stalls on a full issue queue (each recorded as a wait on S named "issue", or a mark)
        self.stall_marks: bool | None = None  # stalls handed on as marks (known at the first stall)
        # those the critical path has not taken yet: (end cycle, record number, the instruction the
        # pipe had just started when it made room), what it needs of them (bottleneck.StallMark)
        self.pending_marks: list[tuple] = []
        # ``pending_marks`` once the stalls are known to go there (and no scalar spans are kept):
        # what :meth:`resolve` appends a stall to itself, without a call of :meth:`_record_stall`
        self.mark_list: list[tuple] | None = None
        # stalls on a full issue queue not resolved yet (pipe.DeferredStall), in program order, and
        # the delay of those resolved since the clock was last exact (added to ``vclock`` once none is left)
        self.deferred: deque[Instr] = deque()
        self.lag = 0
        self.recorder = core.recorder
        self.record = core.recorder.record  # (core, instr): what AICore.record does, one call less

    # ------------------------------------------------------------------------------- driver

    def run(self, fn: A.Function, args: list):
        """SimPy process body: execute the entry function, then drain every pipe."""
        frame: dict[str, Any] = {}
        for name, value in zip(fn.args, args, strict=False):
            frame[name] = value
        try:
            yield from self.exec_region(fn.body, frame)
        except Return:
            pass
        except PtoError:  # the fault happens when the scalar unit gets there: after the stalls before
            yield from self.sync_time()  # it, at its own clock (SimPy time follows it up to there)
            self._close_span()  # the scalar work before the fault belongs in the trace's S lane
            raise
        yield from self.drain_all()
        self._close_span()

    def _close_span(self) -> None:
        if self.vclock > self._span_start and self.keep_spans:
            self.s_spans.append((self._span_start, self.vclock))
        self._span_start = self.vclock

    def charge(self, cycles: int) -> None:
        self.vclock += cycles
        self.own_busy += cycles
        self.own_count += 1

    @property
    def busy(self) -> int:
        """Cycles the scalar unit was busy: its own work and its issues. The issues are counted by
        their pipes (``Pipe.issued``), not here: two updates less per issue (2820 per run of the
        stream kernel, examples/double_buffer_1024.pto: 111.1 -> 109.1 M machine
        instructions, callgrind)."""
        return self.own_busy + self.issue_cost * self.issues()

    @property
    def count(self) -> int:
        """Instructions the scalar unit executed: scalar ops and issues."""
        return self.own_count + self.issues()

    def issues(self) -> int:
        """Instructions issued to the pipes so far (:meth:`issue`)."""
        return sum([p.issued for p in list(self.core.pipes.values())])  # (a list: read from a progress thread too)

    def sync_time(self):
        """Bring SimPy time up to the scalar clock (generator), once every stall is resolved."""
        if self.deferred:
            yield from self.settle()
        env = self.core.env
        if self.vclock > env.now:
            yield env.timeout(self.vclock - env.now)

    def resume_at_now(self) -> None:
        now = int(self.core.env.now)
        if now > self.vclock:
            self._close_span()
            self.vclock = now
            self._span_start = now

    def drain_all(self):
        """Wait until every pipe has completed everything issued so far (PIPE_ALL semantics)."""
        yield from self.sync_time()
        env = self.core.env
        pipes = self.core.pipes.values()
        while not all(p.is_idle() for p in pipes):
            yield env.all_of([p.idle_event() for p in pipes])
        last = max([p.last_done for p in pipes] + [p.ready_at for p in pipes] + [int(env.now)])
        if last > env.now:
            yield env.timeout(last - env.now)
        self.core.commits.flush(env.now)
        self.resume_at_now()

    def bound_region(self, region: A.Region) -> BoundRegion:
        """The region's ops paired with their steps, bound on the region's first entry, so that
        running it again looks nothing up per op. Binding stops at the first op whose binding
        raises: that error is raised when execution reaches the op, after the ops before it ran
        (as if each op were bound just before it runs)."""
        bound = self.regions.get(region)
        if bound is None:
            steps = self.steps
            pairs = []
            error = None
            for op in region.ops:
                step = steps.get(op)
                if step is None:
                    try:
                        step = steps[op] = self.bind(self, op)
                    except Exception as e:  # noqa: BLE001 - raised where the op runs (exec_region)
                        error = e
                        break
                pairs.append((op, step))
            bound = self.regions[region] = BoundRegion(tuple(pairs), error)
        return bound

    def end_run(self) -> None:
        """The run is over: drop the bound steps and the flag records. Each step is a closure over
        this unit (its cells, its bound methods): kept, they tie hundreds of objects into cycles
        with it that only the garbage collector frees, long after the run's result is dropped."""
        self.regions.clear()
        self.steps.clear()
        self.flag_orders.clear()

    def exec_region(self, region: A.Region, frame: dict):
        """Run the region's ops in order (a generator: an op may wait); a fault is located at its op."""
        bound = self.regions.get(region) or self.bound_region(region)
        deferred = self.deferred  # (the same deque for the unit's life: read once per region, not per op)
        most = MAX_DEFERRED_STALLS
        for op, step in bound.steps:
            try:
                gen = step(frame)
                if gen is not None:
                    yield from gen
                if len(deferred) > most:
                    yield from self.settle()
            except PtoError as e:  # the kernel's own fault: located at the op if it is not yet
                if e.loc is None:
                    e.loc = op.loc
                raise
            except (Return, InternalError):
                raise
            except MemoryError:
                raise ResourceError(f"{op.name}: out of memory", op.loc) from None
            except Exception as e:  # anything else is a bug of the emulator, not of the kernel
                raise InternalError(e, op.name, op.loc) from e
        if bound.error is not None:
            raise bound.error

    def count_step(self, op: A.Op) -> None:
        self.step_count += 1
        if self.step_count > self.max_steps:
            n = self.max_steps
            raise StepLimitError(f"the kernel ran more than {n} loop iteration{'s' if n != 1 else ''}; stopped "
                                 f"(an endless loop? raise the limit with --max-steps)", op.loc)

    # --------------------------------------------------------------------------- utilities

    def value(self, frame: dict, operand, loc: Loc):
        if isinstance(operand, int):
            return operand
        try:
            return frame[operand]
        except KeyError:
            raise VerifyError(f"undefined SSA value {operand}", loc) from None

    @property
    def issued(self) -> dict[str, int]:
        """Instructions issued so far per pipe that has any (each pipe counts its own: ``issue``
        bumps one attribute, not a dict entry)."""
        return {name: p.issued for name, p in self.core.pipes.items() if p.issued}

    def flag_order(self, flag: tuple) -> FlagOrder:
        """The program-order record of ``flag`` (a static flag op binds it once)."""
        order = self.flag_orders.get(flag)
        if order is None:
            order = self.flag_orders[flag] = FlagOrder(flag, self.core)
        return order

    def note_flag_order(self, instr: Instr) -> None:
        """Note a set or wait of ``instr.flag`` in program order (see :class:`FlagOrder`)."""
        order = self.flag_order(instr.flag)
        if instr.kind == SET:
            order.on_set(instr)
        else:
            order.on_wait(instr)

    def issue(self, pipe: str, instr: Instr) -> None:
        """Put ``instr`` (made by :func:`make_instr`) in ``pipe``'s queue at the scalar clock (tile
        and flag ops take :meth:`issue_new`, the same in one call)."""
        # (charged as :meth:`charge` would, but counted by the pipe: see :attr:`busy`)
        vclock = self.vclock = self.vclock + self.issue_cost
        deferred = self.deferred
        instr.low = vclock
        # issued after a stall not resolved yet: its issue cycle is not known yet
        instr.issue = deferred[-1] if deferred else vclock
        core = self.core
        target = core.pipes[pipe]
        n = target.issued
        instr.pidx = n
        target.issued = n + 1
        instr.sepoch = self.epochs.count
        total = self.issued_total = self.issued_total + 1
        instr.iseq = total
        watch = core.slot_watch
        if watch is not None and watch.freed:  # a FIFO slot was freed: nothing may touch it now
            watch.check(instr)
        queue = target.queue
        queue.append(instr)  # into the pipe's queue, waking the pipe if it sleeps on an empty one
        if target.wake is not None:
            wake, target.wake = target.wake, None
            wake.succeed()
        if len(queue) > target.stall_above:  # over the queue's depth: a stall (see below), held by instr
            # (pipe.DeferredStall: its clock is ``low``; taken, lag unknown, nobody watching yet)
            instr.stall_taken = instr.stall_lag = instr.stall_watch = None
            deferred.append(instr)

    def issue_new(self, pipe: str, kind: int, name: str, loc: Loc, occupancy: int = 0, latency: int = 0,
                  bound: BoundOp | None = None, reads: tuple = (), writes: tuple = (), flag: tuple | None = None,
                  operands: list | tuple = (), nbytes: int = 0, transfer: tuple | None = None,
                  key: object = None) -> Instr:
        """A new instruction, issued: ``issue(pipe, make_instr(kind, name, loc, pipe, 0, ...))`` in one
        call, the same fields set to the same values in the same order of effects.

        The path of nearly every instruction (tile ops, flag ops): :func:`make_instr` and :meth:`issue`
        written out here, so an issue costs one Python call, not two, and the fields ``issue`` sets
        are stored once. Callgrind, timing-only stream kernel (examples/double_buffer_1024.pto,
        2820 instructions per run): 99.71 -> 98.54 M machine instructions per run for its flag
        ops, -> 97.84 M with its tile ops.
        tests/emulator/core/test_issue_new.py runs kernels with this replaced by the two calls."""
        ins = Instr()  # make_instr's fields, but those issue sets
        ins.kind = kind
        ins.name = name
        ins.loc = loc
        ins.pipe = pipe
        ins.occupancy = occupancy
        ins.latency = latency
        ins.bound = bound
        ins.reads = reads
        ins.writes = writes
        ins.flag = flag
        ins.operands = operands
        ins.nbytes = nbytes
        ins.transfer = transfer
        ins.start = -1
        ins.end = -1
        ins.done = -1
        ins.seq = -1
        ins.released_by = None
        ins.wait_start = -1
        ins.core = None
        ins.vc = None
        ins.path = None
        ins.key = key
        # issue's (see there)
        vclock = self.vclock = self.vclock + self.issue_cost
        deferred = self.deferred
        ins.low = vclock
        ins.issue = deferred[-1] if deferred else vclock
        core = self.core
        target = core.pipes[pipe]
        n = target.issued
        ins.pidx = n
        target.issued = n + 1
        ins.sepoch = self.epochs.count
        total = self.issued_total = self.issued_total + 1
        ins.iseq = total
        watch = core.slot_watch
        if watch is not None and watch.freed:
            watch.check(ins)
        queue = target.queue
        queue.append(ins)
        if target.wake is not None:
            wake, target.wake = target.wake, None
            wake.succeed()
        if len(queue) > target.stall_above:
            ins.stall_taken = ins.stall_lag = ins.stall_watch = None
            deferred.append(ins)
        return ins

    # A stall on a full issue queue (``issue``, inline): the instruction just issued went over the
    # queue's depth. It is still in the scalar unit's hands (last in the queue) and nothing after it
    # issues until the pipe takes an instruction off (on hardware it cannot put it in before), which
    # bounds how far the scalar unit runs ahead of the pipes. The stall is deferred (a
    # DeferredStall): it ends when the pipe takes the entry that makes room, ``depth`` places ahead
    # of it (``Pipe.run`` notes when, and calls :meth:`resolve` if it is the oldest), at the scalar
    # clock or later.

    def resolve(self, taken: int, made_by: Instr | None) -> None:
        """Resolve the deferred stalls whose pipes have made room, oldest first (each one's delay
        depends on those before it): a stall lasts from the scalar clock to the cycle room was made,
        if that is later (recorded as a scalar-unit wait, a sync point later issues follow for the
        critical path). Whoever waits for one is woken (a pipe at its instruction's issue cycle: the
        wait and the issue cycle cost one event). Called by the pipe that has just made room for
        the oldest (``Pipe.run``), at ``taken``, having just started ``made_by``: the oldest's
        ``stall_taken`` and ``stall_made_by``, handed over, not stored (half the stalls resolve so,
        1264 of 2648 per run of the stream kernel, examples/double_buffer_1024.pto)."""
        deferred = self.deferred
        lag = self.lag
        stall = deferred.popleft()
        while True:
            late = taken - stall.low
            if late > lag:  # the pipe took it after the scalar clock (lag later) got there: a stall
                marks = self.mark_list
                if marks is not None:  # handed on as a mark (_record_stall's, inline: see there)
                    self.stalls += 1
                    marks.append((taken, self.recorder.seq + 0.5, made_by))
                else:
                    self._record_stall(stall, stall.low + lag, taken, made_by)
                lag = late
            stall.stall_lag = lag
            if stall.stall_watch is not None:
                self._release(stall.stall_watch, lag)
            if not deferred:  # the clock is exact again
                self.vclock += lag
                self.lag = 0
                return
            stall = deferred[0]
            # issued right after the one just resolved (its ``issue`` is that one): its issue cycle is
            # known now, and its pipe need not work it out (callgrind, timing-only stream kernel,
            # examples/double_buffer_1024.pto, 2637 per run: 93.67 -> 93.39 M machine instructions)
            stall.issue = stall.low + lag
            taken = stall.stall_taken
            if taken is None:  # not taken yet
                self.lag = lag
                return
            deferred.popleft()
            made_by = stall.stall_made_by
            stall.stall_made_by = None  # (used: an instruction holds no other past its stall's end)

    def _release(self, watched: tuple[list, list], lag: int) -> None:
        """A stall is resolved with delay ``lag``: time the allocation counters noted after it and
        wake whoever waits (a pipe at its instruction's issue cycle, the scalar unit now)."""
        waiters, allocs = watched
        if allocs:
            self.core.alloc_log.extend((low + lag, name, used) for low, name, used in allocs)
        if waiters:
            now = int(self.core.env.now)
            for instr, event in waiters:
                event.wake_in(max(instr.low + lag - now, 0) if instr is not None else 0)

    def _record_stall(self, stall: Instr, stall_from: int, taken: int, made_by: Instr | None) -> None:
        """The stall the instruction ``stall`` held (pipe.DeferredStall), from ``stall_from`` to
        ``taken``, when the pipe made room having just started ``made_by``: recorded as a wait on S
        named "issue" (a mark the critical path takes itself when it is the only one to see it:
        ``pending_marks``).

        Its program order (``iseq``) is the held instruction's plus one half: after it, before the
        next issue. A stall takes no whole number, so that whether one is recorded (known only once
        it is resolved) changes no later instruction's number: those are final when issued. A mark
        is numbered in the record order the same way: a half above the last record (whatever comes
        next comes after it), no number of its own and no call of the recorder.

        Once marks are known to be taken (and no scalar spans kept), :meth:`resolve` appends them
        itself (``mark_list``): a call less per stall and no work that only spans need. Callgrind,
        timing-only stream kernel (examples/double_buffer_1024.pto, 757 stalls per run): 96.2 -> 95.2 M
        machine instructions per run."""
        if self.keep_spans:
            if stall_from > self._span_start:
                self.s_spans.append((self._span_start, stall_from))
            self._span_start = taken
        self.stalls += 1
        core = self.core
        marks = self.stall_marks
        if marks is None:  # the run's first stall: the consumers are all known by now
            marks = self.stall_marks = core.recorder.takes_stall_marks()
            if marks and not self.keep_spans:
                self.mark_list = self.pending_marks
        if marks:
            self.pending_marks.append((taken, self.recorder.seq + 0.5, made_by))
            return
        record = make_instr(XWAIT, "issue", stall.loc, "S", stall_from, 0, 0, None, (), (),
                       QueueRoom(core.pipes[stall.pipe], made_by))
        record.wait_start = stall_from
        record.start = record.end = record.done = taken
        record.pidx = self.s_accesses
        record.sepoch = self.epochs.count  # no sync point is added while a stall is deferred
        record.iseq = stall.iseq + 0.5
        self.record(core, record)

    def settle(self):
        """Wait until every deferred stall is resolved (generator): the clock is exact again."""
        while self.deferred:
            yield wake_at(self.deferred[-1], None, self.core.env)

    def note_alloc(self, name: str, used: int) -> None:
        """An allocation counter for the trace, at the scalar clock (once it is known)."""
        if self.deferred:
            watch(self.deferred[-1])[1].append((self.vclock, name, used))
        else:
            self.core.alloc_log.append((self.vclock, name, used))

    def blocked_issue(self) -> BlockedIssue | None:
        """At a deadlock: the stall on a full issue queue the scalar unit is held at, if any (the
        oldest unresolved one: nothing is left to resolve it)."""
        if not self.deferred:
            return None
        held = self.deferred[0]
        return BlockedIssue(self.core.pipes[held.pipe], held)

    def issue_blocked_until(self) -> int:
        """At a deadlock: where the scalar clock stood when it stalled on the full issue queue it
        still waits on (0 if none): the run ends no earlier."""
        return self.deferred[0].low + self.lag if self.deferred else 0


class FailedStep:
    """The step of an op that cannot run: raises its error when (if ever) it executes. The verifier
    reports the input errors among them before anything runs."""

    __slots__ = ("error",)

    def __init__(self, error: Exception) -> None:
        self.error = error

    def __call__(self, frame: dict):
        raise self.error


def fail_step(err: Exception) -> Step:
    return FailedStep(err)


def values_of(operands: list) -> Callable[[dict], tuple]:
    """A reader of several operands at once (SSA names or literal ints), bound once: one C-level
    ``itemgetter`` when all are names. An undefined name raises ``KeyError``; the caller then reads
    them through :meth:`ScalarUnit.value`, which says which one, where."""
    names = list(operands)
    if any(n.__class__ is int for n in names):
        return lambda frame: tuple([n if n.__class__ is int else frame[n] for n in names])
    if len(names) == 1:
        name = names[0]
        return lambda frame: (frame[name],)
    if not names:
        return lambda frame: ()
    return itemgetter(*names)


def require(op: A.Op, *, operands: int = 0, results: int = 0, regions: int = 0, ins: int = 0,
            outs: int = 0) -> None:
    """An op has at least the operands, results, regions, ins and outs its lowering reads, or a
    located error says which are missing (binding never indexes past what the text gave)."""
    if (len(op.operands) >= operands and len(op.results) >= results and len(op.regions) >= regions
            and len(op.ins) >= ins and len(op.outs) >= outs):  # (nearly always: 20 bytecodes, not 90)
        return
    for what, need, have in (("operand", operands, len(op.operands)), ("result", results, len(op.results)),
                             ("region", regions, len(op.regions)), ("ins operand", ins, len(op.ins)),
                             ("outs operand", outs, len(op.outs))):
        if have < need:
            raise VerifyError(f"{op.name} needs {need} {what}{'s' if need > 1 else ''}, got {have}", op.loc)


def scalar_type_name(t) -> str:
    """The scalar type name of ``t``; ``index`` for anything that is not a scalar type."""
    if isinstance(t, A.ScalarType):
        return t.name
    return "index"


def lower_noop(su: ScalarUnit, op: A.Op) -> Step:
    def step(frame):
        return None

    return step
