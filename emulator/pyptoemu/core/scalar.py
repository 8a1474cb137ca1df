"""The scalar unit: walks a function in program order, evaluates control flow, issues tile ops.

Each AST op is bound once (``pyptoemu.core.binding`` picks its lowering) into a step that reads SSA
values from the frame, does its work and returns ``None`` or, when it has to wait for simulated time
(waits on the S pipe, full barriers, nested regions), a generator. The hot loop therefore does no
YAML or string lookups. This module sits below the lowerings: it is handed the binder, it never
imports one (scalar unit <- lowerings <- binding is a one-way chain).

The scalar unit keeps its own clock (``vclock``): issuing is charged there without a SimPy event
per op; each issued instruction carries its issue cycle and its pipe starts it no earlier. The
scalar process only synchronises with SimPy time when it must observe pipe state.
"""

from __future__ import annotations

from collections.abc import Callable
from operator import itemgetter
from typing import Any, NamedTuple

from ptoisa.text import ast as A
from pyptoemu.core.pipe import SET, XWAIT, Instr, QueueRoom
from pyptoemu.core.recorder import EpochLog
from pyptoemu.errors import InternalError, Loc, PtoError, ResourceError, StepLimitError, VerifyError

Step = Callable[[dict], Any]  # one op's work per execution: None, or a generator that waits
Binder = Callable[["ScalarUnit", A.Op], Step]  # binds any op (pyptoemu.core.binding.bind_op)
Lowering = Callable[["ScalarUnit", A.Op], Step]  # binds the ops of one kind


class BoundRegion(NamedTuple):
    """A region bound once: (op, step) in program order, up to the first op whose binding failed,
    and that failure (raised when execution reaches it), or None."""

    steps: tuple[tuple[A.Op, Step], ...]
    error: Exception | None


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
        self.busy = 0
        self.count = 0  # instructions the scalar unit executed (scalar ops and issues)
        self.issued_total = 0  # program order across pipes, for naming races in program order
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
        self.issued: dict[str, int] = {}  # instructions issued per pipe so far
        self.s_accesses = 0  # memory accesses made by the scalar unit itself
        # Scalar sync points in program order: ("wait", instr) after a wait_flag on PIPE_S,
        # ("all", issued counts) after a full barrier. Instructions record how many preceded them.
        self.epochs = EpochLog()
        self._span_start = 0
        # the pipe whose queue the last issue overfilled: that instruction is still in the scalar
        # unit's hands (last in the queue), so nothing after it issues until the pipe makes room
        self.full = None
        self.stalls = 0  # stalls on a full issue queue (each recorded as a wait on S named "issue")

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
        yield from self.drain_all()
        self._close_span()

    def _close_span(self) -> None:
        if self.vclock > self._span_start and self.keep_spans:
            self.s_spans.append((self._span_start, self.vclock))
        self._span_start = self.vclock

    def charge(self, cycles: int) -> None:
        self.vclock += cycles
        self.busy += cycles
        self.count += 1

    def sync_time(self):
        """Bring SimPy time up to the scalar clock (generator)."""
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

    def exec_region(self, region: A.Region, frame: dict):
        bound = self.regions.get(region) or self.bound_region(region)
        for op, step in bound.steps:
            try:
                gen = step(frame)
                if gen is not None:
                    yield from gen
                full = self.full
                if full is not None:
                    if len(full.queue) <= full.depth:  # taken off already: room, no generator needed
                        self.full = None
                    else:
                        yield from self.wait_for_room()
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
            raise StepLimitError(f"the kernel ran more than {self.max_steps} loop iterations; stopped "
                                 f"(an endless loop? raise the limit with --max-steps)", op.loc)

    # --------------------------------------------------------------------------- utilities

    def value(self, frame: dict, operand, loc: Loc):
        if isinstance(operand, int):
            return operand
        try:
            return frame[operand]
        except KeyError:
            raise VerifyError(f"undefined SSA value {operand}", loc) from None

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
        cost = self.issue_cost
        vclock = self.vclock = self.vclock + cost
        self.busy += cost
        self.count += 1
        instr.issue = vclock
        issued = self.issued
        n = issued.get(pipe, 0)
        instr.pidx = n
        issued[pipe] = n + 1
        instr.sepoch = self.epochs.count
        total = self.issued_total = self.issued_total + 1
        instr.iseq = total
        core = self.core
        watch = core.slot_watch
        if watch is not None and watch.freed:  # a FIFO slot was freed: nothing may touch it now
            watch.check(instr)
        target = core.pipes[pipe]
        queue = target.queue
        queue.append(instr)  # into the pipe's queue, waking the pipe if it sleeps on an empty one
        if target.wake is not None:
            wake, target.wake = target.wake, None
            wake.succeed()
        if target.depth and len(queue) > target.depth:
            self.full = target

    def wait_for_room(self):
        """The last issue went to a full queue (generator): the scalar unit stalls, issuing nothing
        more, until that pipe has taken instructions off its queue and the one in the scalar unit's
        hands fits (on hardware it cannot put it in before). Bounds how far the scalar unit runs
        ahead of the pipes, and so how many issued instructions a run holds at once.

        The stall starts at the scalar unit's clock (or now, if SimPy time is already past it). No
        event brings SimPy time up to the scalar clock first: the scalar unit sleeps until the pipe
        takes its next instruction. Taken by then (in the scalar unit's cycle or before), the queue
        had room when the instruction was issued: no stall, and the scalar unit goes on ahead of
        SimPy time as it does between stalls; taken later, the scalar unit stalled until then. One
        event per full queue instead of two (measured in benchmarks/speed_vs_simpy.py)."""
        target = self.full
        self.full = None
        queue, depth = target.queue, target.depth
        if len(queue) <= depth:  # the pipe took an instruction since (at or before the scalar clock)
            return
        core = self.core
        env = core.env
        now = env.now
        issued_at = self.vclock
        stall_from = issued_at if issued_at > now else int(now)
        held = queue[-1]
        core.blocked_issue = target
        made_by = None
        while len(queue) > depth:
            target.room = env.event()
            made_by = yield target.room
        core.blocked_issue = None
        if env.now <= stall_from and stall_from > now:
            return  # room made by the scalar clock (a tie goes to the pipe): no stall
        self.resume_at_now()
        # recorded as a scalar-unit wait (a sync point later issues follow, for the critical path)
        stall = Instr(XWAIT, "issue", held.loc, "S", issued_at, 0, 0, None, (), (), QueueRoom(target, made_by))
        stall.wait_start = stall_from
        stall.start = stall.end = stall.done = self.vclock
        stall.pidx = self.s_accesses
        stall.sepoch = self.epochs.count
        self.issued_total += 1
        stall.iseq = self.issued_total
        self.stalls += 1
        core.record(stall)

    def issue_blocked_until(self) -> int:
        """Where SimPy time would be if the scalar unit, blocked on a full issue queue, had first
        caught up with its own clock: a run that deadlocks there ends no earlier."""
        return self.vclock if self.core.blocked_issue is not None else 0


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
