"""The chip: many AI cores in one SimPy environment, blocks and waves, shared GM.

``Chip.run(fn, args, blocks, launch)`` runs ``blocks`` blocks of the entry ``fn``. The launch
(:mod:`pyptoemu.core.placement`) says what one block occupies: one AIV, one AIC, one core group
(its AIC runs the cube build of the entry, its two AIVs the vector build, concurrently, with
``get_subblock_idx`` 0 and 1) or one combined core. A dispatcher hands block ``i`` to the first
free unit, in block order; once every unit is busy the next block waits for the unit that frees up
first (the hardware block scheduler's waves). Dispatching a block costs the block scheduler
``launch_block`` cycles (machine file): a block that follows another on its unit starts that long
after the unit became free, so runs in waves pay it inside their makespan. The kernel launch
(``launch_kernel``) and the first wave's dispatch come before cycle 0: a run's cycles are the
kernel's own, and a measured kernel time adds both to them (``RunResult.hardware_cycles``).

What the cores share lives here: the SimPy environment and its clock, one commit queue (a write
that lands on one core is visible to a read on another at the same cycle), GM (one array per
pointer argument), the findings, the cross-core state (FIFOs, signals:
:mod:`pyptoemu.core.crosscore`) and the shared memory system (:mod:`pyptoemu.core.memsys`, where
the DMA transfers of all cores meet). Cores are created when a block first needs them, so 48 idle
cores cost nothing: memory grows with the work, not with the core count.
"""

from __future__ import annotations

import simpy

from ptoisa.machine import CoreKind, Machine
from ptoisa.text import ast as A
from pyptoemu.check.findings import Findings
from pyptoemu.core.aicore import AICore, Memories
from pyptoemu.core.binding import SharedBinds
from pyptoemu.core.crosscore import CrossCore
from pyptoemu.core.memsys import SharedMemory
from pyptoemu.core.pipe import CommitQueue
from pyptoemu.core.placement import Launch
from pyptoemu.core.recorder import Recorder
from pyptoemu.core.simloop import Environment
from pyptoemu.errors import DeadlockError, InputError, InternalError, PtoError
from pyptoemu.isa.ieee import QUIET


def _original(e: BaseException) -> BaseException:
    """The exception a SimPy process raised, not the copies SimPy re-raises (they lose ``loc``)."""
    while type(e.__cause__) is type(e) and e.__cause__.args == e.args:
        e = e.__cause__
    return e


LABEL = {"aic": "AIC", "aiv": "AIV", "combined": "CORE"}


class Chip:
    def __init__(self, module: A.Module, isa, machine: Machine, seed: int = 0, max_steps: int = 10_000_000,
                 data: bool = True, keep_log: bool = False, trace: bool = False, bindings: SharedBinds | None = None):
        self.data = data  # False: a timing-only run (pyptoemu.run(data=False))
        self.keep_log = keep_log  # every instruction kept on its core's trace_log (core/recorder.py)
        self.side_logs = keep_log or trace  # scalar spans and allocations logged (a trace writer drains them)
        self.module = module
        self.isa = isa
        self.machine = machine
        self.seed = seed
        self.max_steps = max_steps
        self.spec = machine.chip_spec()
        self.env = Environment()
        self.commits = CommitQueue()
        self.recorder = Recorder(self.env, keep_log)  # where every core's instructions go, in start order
        self.findings = Findings()
        self.memory = Memories(machine, seed, locs=(), data=data)  # GM only: the cores share its ``gm``
        self.memsys = SharedMemory(self.spec, machine)
        self.crosscore = CrossCore(self)
        self.cores: list[AICore] = []  # in the order they were first used
        # what binding finds that the cores share (lowerings, tile-op templates: binding.SharedBinds);
        # given: that of earlier runs of the same module on the same ISA and machine (api._Prepared.bindings)
        self.bindings = SharedBinds() if bindings is None else bindings
        self._slots: dict[tuple[str, int], AICore] = {}
        self.launch = Launch("combined")
        self.blocks = 1
        self.undispatched = 0  # blocks not handed to a unit yet
        self.busy_units: set[int] = set()  # units running a block
        # cycles the block scheduler takes to dispatch a block (machine file: launch_block). A block
        # that follows another on its unit starts this long after the unit became free, inside the
        # makespan; the kernel launch and the first wave's dispatch come before cycle 0 (a run's
        # result names them: RunResult.launch)
        self.launch_kernel = int(machine.params.get("launch_kernel", 0))
        self.launch_block = int(machine.params.get("launch_block", 0))

    # cores ----------------------------------------------------------------------------------

    def core(self, kind: str, index: int) -> AICore:
        """Core ``index`` of ``kind``, created on first use."""
        key = (kind, index)
        c = self._slots.get(key)
        if c is None:
            spec: CoreKind = self.spec.kinds[kind]
            c = AICore(self.module, self.isa, self.machine, seed=self.seed, max_steps=self.max_steps,
                       chip=self, kind=spec, label=f"{LABEL[kind]}{index}")
            c.group = index if kind != "aiv" else index // max(self.spec.group.get("aiv", 1), 1)
            c.crosscore = self.crosscore
            self._slots[key] = c
            self.cores.append(c)
        return c

    def group_cores(self, group: int) -> tuple:
        """(AIC, [AIV, ...]) of core group ``group`` (cores created by the launch)."""
        n_aiv = self.spec.group.get("aiv", 1)
        return (self._slots[("aic", group)],
                [self._slots[("aiv", group * n_aiv + k)] for k in range(n_aiv) if ("aiv", group * n_aiv + k) in self._slots])

    def _units(self, mode: str) -> tuple[int, list]:
        """(number of units, how a unit maps to cores): a unit is what one block occupies."""
        kinds = self.spec.kinds
        if mode == "group" and {"aic", "aiv"} <= set(kinds):
            n_aiv = self.spec.group.get("aiv", 1)
            n_aic = self.spec.group.get("aic", 1)
            return self.spec.groups, [("aic", n_aic), ("aiv", n_aiv)]
        if mode in ("aic", "aiv") and mode in kinds:
            return self.spec.count(mode), [(mode, 1)]
        kind = "combined" if "combined" in kinds else next(iter(kinds))
        return self.spec.count(kind), [(kind, 1)]

    def _unit_cores(self, unit: int, layout: list) -> list[tuple[AICore, int, int]]:
        """(core, sub-block index, sub-block count) of each core of ``unit``."""
        out = []
        for kind, per_unit in layout:
            for sub in range(per_unit):
                sub_num = per_unit if kind == "aiv" and len(layout) > 1 else 1
                core = self.core(kind, unit * per_unit + sub)
                core.unit = unit
                out.append((core, sub if sub_num > 1 else 0, sub_num))
        return out

    def still_running(self) -> set[int]:
        """``id`` of each core that may still hand an instruction to the checks: its unit runs a
        block, a block is still to be dispatched, or the recorder still holds one of its records."""
        if self.undispatched:
            return {id(c) for c in self.cores}
        out = {id(c) for c in self.cores if c.unit in self.busy_units}
        out.update(self.recorder.held_cores())
        return out

    # running --------------------------------------------------------------------------------

    def run(self, fn: A.Function, args: list, blocks: int, launch: Launch) -> int:
        """Run ``blocks`` blocks of ``fn``; the makespan in cycles."""
        if not isinstance(blocks, int) or isinstance(blocks, bool) or blocks < 1:
            raise InputError(f"blocks must be a positive integer, not {blocks!r}")
        self.launch, self.blocks = launch, blocks
        n_units, layout = self._units(launch.mode)
        free = simpy.Store(self.env)
        for u in range(min(n_units, blocks)):
            self._unit_cores(u, layout)  # every core a block will run on exists from the start (the race check counts on it)
            free.put(u)
        self.undispatched, self.busy_units = blocks, set()
        done = self.env.event()
        remaining = [blocks]

        def block(unit: int, b: int):
            cores = self._unit_cores(unit, layout)
            dispatch = 0
            if cores[0][0].blocks_run:  # a wave after the first: the block scheduler dispatches it
                dispatch = self.launch_block
                yield self.env.timeout(dispatch)
            drained_last = max((c for c, _, _ in cores), key=lambda c: c.finished_at)  # freed the unit
            procs = [c.start_block(fn, args, b, blocks, sub, sub_num, drained_last, dispatch)
                     for c, sub, sub_num in cores]
            try:
                yield self.env.all_of(procs)
            except Exception as e:  # noqa: BLE001 - any fault: hand the original to run() (SimPy threw a copy without its loc)
                if not done.triggered:
                    done.fail(_original(e))
                return
            self.busy_units.discard(unit)
            free.put(unit)
            remaining[0] -= 1
            if remaining[0] == 0:
                done.succeed()

        def dispatch():
            for b in range(blocks):
                unit = yield free.get()
                self.busy_units.add(unit)
                self.undispatched -= 1
                self.env.process(block(unit, b))

        self.env.process(dispatch())
        try:
            with QUIET:  # one np.errstate for the whole run, not one per tile op (pyptoemu.isa.ieee)
                self.env.run(until=done)
        except RuntimeError as e:
            if "No scheduled events left" not in str(e):
                raise
            self._catch_up_blocked_issue()
            raise self._deadlock() from None
        except (PtoError, InternalError) as e:  # a failed pipe process: SimPy raised a copy
            raise _original(e) from None
        self.commits.flush(float("inf"))
        for c in self.cores:
            c.report_left_flags()
        self.crosscore.finish()
        return int(self.env.now)

    def end_run(self) -> None:
        """The run is over: each core lets go of what only running needed (:meth:`AICore.end_run`)."""
        for c in self.cores:
            c.end_run()

    def _catch_up_blocked_issue(self) -> None:
        """A scalar unit stalled on a full issue queue sleeps without first catching SimPy time up
        with its own clock (ScalarUnit.settle): a deadlock found there is at that clock."""
        late = max((c.scalar.issue_blocked_until() for c in self.cores), default=0)
        if late > self.env.now:
            self.env.run(until=late)

    def _deadlock(self) -> DeadlockError:
        """One core: its own report, unchanged. Several: each blocked core, pipe and line."""
        if len(self.cores) == 1 and not self.crosscore.active:
            return self.cores[0]._deadlock()
        lines, locs, pipes = [], [], []
        for c in self.cores:
            for ins in c.blocked():
                misuse = getattr(ins.flag, "misuse", None)
                text = misuse() if misuse is not None else None
                if text:
                    self.findings.add("fifo-misuse", "error", text, [ins.loc], [f"{c.label}:{ins.pipe}"])
            ls, lc, ps = c.blocked_report(f"{c.label} ")
            lines.extend(ls)
            locs.extend(lc)
            pipes.extend(f"{c.label}:{p}" for p in ps)
        msg = ("deadlock across cores: nothing left to run, and these wait for each other or for "
               "something no core will do\n" + "\n".join(lines))
        err = DeadlockError(msg, locs[0] if locs else None)
        self.findings.add("deadlock", "error", msg.replace("\n", " "), locs, pipes, cycle=int(self.env.now))
        return err
