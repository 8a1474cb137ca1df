"""One AI core: wires the memories, the pipes, the flags and the scalar unit, and runs a function.

A core has a kind (``ptoisa.machine.CoreKind``: AIC, AIV or combined) that decides which pipes and
on-chip buffers it has. Standing alone (``AICore(...).run(fn, args)``) it owns its SimPy environment
and GM; on a chip (:mod:`pyptoemu.core.chip`) it shares the chip's environment, commit queue, GM and
findings, and runs one block after another (``start_block``). ``run`` returns when every pipe has
drained; a wait that can never be satisfied empties SimPy's schedule, which is turned into a
:class:`DeadlockError` naming each blocked pipe and the instruction it waits on.
"""

from __future__ import annotations

import simpy

from ptoisa.machine import CoreKind, Machine
from ptoisa.text import ast as A
from pyptoemu.check.findings import Findings
from pyptoemu.core.binding import SharedBinds, lowering_of
from pyptoemu.core.memory import GMBuffer, OnChipBuffer, Ptr
from pyptoemu.core.memsys import DMA_PIPES
from pyptoemu.core.pipe import BARRIER, WAIT, XWAIT, CommitQueue, Flags, Instr, Pipe, is_issued, make_instr
from pyptoemu.core.pipenames import event_of, pipe_of
from pyptoemu.core.placement import kernel_kind
from pyptoemu.core.recorder import Recorder
from pyptoemu.core.scalar import ScalarUnit, fail_step, lower_noop
from pyptoemu.core.simloop import Environment
from pyptoemu.errors import DeadlockError, InputError, Loc, PtoError
from pyptoemu.isa.ieee import QUIET

# A resource limit of the emulator itself (not of the modelled machine): a typo in a shape should
# not make it try to allocate terabytes of random data.
MAX_GENERATED_BYTES = 2**30
MAX_GENERATED_TOTAL = 2 * 2**30  # over all arguments of one run


class Memories:
    """GM buffers per pointer argument plus the on-chip buffers of the machine."""

    def __init__(self, machine: Machine, rng_seed: int, locs: tuple[str, ...] | None = None,
                 gm: dict | None = None, data: bool = True):
        self.data = data  # False: a timing-only run, which neither generates nor computes data
        specs = [spec for loc, spec in machine.buffers.items() if locs is None or loc in locs]
        self.onchip = {spec.loc: OnChipBuffer(spec) for spec in specs}
        self.written = {buf.spec.name: buf for buf in self.onchip.values()}  # their "ever written" bytes
        # On-chip byte ranges known to be written in full: the written bytes only ever grow, so a
        # range found (or made) fully written stays so; a repeated tile access skips the search.
        self.known_written: set[tuple] = set()
        self.gm: dict[int, GMBuffer] = {} if gm is None else gm  # shared by the cores of a chip
        self.seed = rng_seed
        self.uninit_hook = None  # set by the core: called with (instr, buffer name, lo, hi)

    def note_view(self, ptr: Ptr, shape: tuple, strides: tuple, loc: Loc) -> None:
        """A tensor view was made over ``ptr``: make sure its GM buffer holds every element."""
        gm = ptr.gm
        if any(d == 0 for d in shape):
            need = 0
        else:
            need = ptr.offset + sum((d - 1) * s for d, s in zip(shape, strides, strict=False) if s > 0) + 1
        key = (shape, strides)
        if key not in gm.view_shapes:
            gm.view_shapes.append(key)
        self._grow(ptr, need, loc)

    def note_element(self, ptr: Ptr, index: int, loc: Loc) -> None:
        """A scalar access (``load_scalar``/``store_scalar``) reaches element ``index`` of ``ptr``'s
        buffer: stand-in data covers it as a view would (a given input is bounds-checked by the
        access itself)."""
        if index >= 0 and not ptr.gm.given:
            self._grow(ptr, index + 1, loc)

    def _grow(self, ptr: Ptr, need: int, loc: Loc) -> None:
        """Make ``ptr``'s GM buffer hold ``need`` elements: stand-in data drawn lazily, an error for
        a given input that is too small or for stand-in data beyond the generation bounds."""
        gm = ptr.gm
        have = gm.size
        if need <= have:
            return
        if gm.given:
            raise InputError(f"input {gm.name} holds {have} elements of {gm.dtype_name} but the view "
                             f"made here reaches element {need - 1}", loc)
        if not self.data:  # timing only: the buffer is as large as its views, and holds nothing
            gm.size = need
            return
        if need * gm.dtype.itemsize > MAX_GENERATED_BYTES:
            raise InputError(f"the view made here over {gm.name} reaches {need} elements "
                             f"({need * gm.dtype.itemsize / 2**30:.1f} GiB); the emulator generates at most "
                             f"{MAX_GENERATED_BYTES // 2**30} GiB of stand-in data per argument: pass the "
                             f"input (--input {gm.name}=FILE.npy) if this size is intended", loc)
        generated = sum(b.size * b.dtype.itemsize for b in self.gm.values() if not b.given and b.store is not None)
        total = generated + (need - have) * gm.dtype.itemsize
        if total > MAX_GENERATED_TOTAL:
            raise InputError(f"the view made here over {gm.name} brings the generated stand-in data of all "
                             f"arguments to {total / 2**30:.1f} GiB; the emulator generates at most "
                             f"{MAX_GENERATED_TOTAL // 2**30} GiB in all: pass the inputs (--input argN=FILE.npy) "
                             f"if these sizes are intended", loc)
        gm.reserve_standin(need, self.seed)  # drawn piece by piece when the kernel touches it

    def note_reads(self, reads: tuple, instr: Instr) -> bool:
        """Report the ranges read before anything wrote them; True if every range is known written
        in full (or off chip): noting them again would change nothing, now and later."""
        if self.uninit_hook is None:
            return True
        written, known = self.written, self.known_written
        noted = True
        for r in reads:  # (the buffer first: a GM range is never known, and hashing one costs more)
            name, lo, hi, _ = r
            buf = written.get(name)
            if buf is None or r in known:
                continue
            if not buf.written.covers(lo, hi):
                self.uninit_hook(instr, name, lo, hi)
                noted = False
            else:
                known.add(r)
        return noted

    def writes_noted(self, writes: tuple) -> bool:
        """Whether :meth:`note_writes` of ``writes`` would change nothing, now and later: each range
        is known written in full already (that never reverts) or outside the on-chip buffers (GM
        is not followed). A timing-only tile instruction whose writes are noted has nothing to
        commit (TileOpBinding.start)."""
        written, known = self.written, self.known_written
        for w in writes:  # (the buffer first: a GM range is never known, and hashing one costs more)
            if w[0] in written and w not in known:
                return False
        return True

    def note_writes(self, writes: tuple) -> None:
        written, known = self.written, self.known_written
        for w in writes:
            if w in known:
                continue
            name, lo, hi, _ = w
            buf = written.get(name)
            if buf is not None:
                buf.cover(hi)
                size = buf.data.size  # the capacity, if the range reaches past it
                buf.written.add(lo, min(hi, size))
                if hi <= size:
                    known.add(w)


class AICore:
    def __init__(self, module: A.Module, isa, machine: Machine, seed: int = 0, max_steps: int = 10_000_000,
                 check_uninitialised: bool = True, *, chip=None, kind: CoreKind | None = None,
                 label: str = "core0", data: bool = True, keep_log: bool = False):
        self.data = data if chip is None else chip.data  # False: timing only (no values computed)
        # keep every instruction on trace_log (memory grows with the run; see core/recorder.py)
        self.keep_log = keep_log if chip is None else chip.keep_log
        # scalar spans and allocation counters (for a trace: its writer takes them as they come)
        self.side_logs = self.keep_log if chip is None else chip.side_logs
        self.module = module
        self.isa = isa
        self.machine = machine
        self.chip = chip
        self.kind = kind or CoreKind("combined", machine.pipes, tuple(machine.buffers), True)
        self.label = label
        self.build = {"aic": "cube", "aiv": "vector"}.get(self.kind.name)  # None: runs both sides
        self.env = Environment() if chip is None else chip.env
        self.findings = Findings() if chip is None else chip.findings
        self.commits = CommitQueue() if chip is None else chip.commits
        self.recorder = Recorder(self.env, self.keep_log) if chip is None else chip.recorder
        self.flags = Flags(self.env, self.findings)
        self.memory = Memories(machine, seed, self.kind.buffers, None if chip is None else chip.memory.gm,
                               data=self.data)
        self.memsys = None if chip is None else chip.memsys  # read by the DMA pipes (memsys.py)
        # what binding finds that the cores of a chip share (binding.SharedBinds: lowerings, tile-op
        # templates); a core on its own keeps its lowerings and shares no tile-op binding
        self.shared_bindings: SharedBinds | None = None if chip is None else chip.bindings
        self.lowerings: dict = {} if chip is None else chip.bindings.lowerings
        depth = int(machine.params.get("issue_queue_depth", 0))  # 0 (a file without it): no bound
        self.pipes = {
            p: Pipe(self, p, machine.in_order.get(p, True), machine.costs, depth)
            for p in self.kind.pipes if p != "S"
        }
        for name, pipe in self.pipes.items():
            if name in DMA_PIPES:
                pipe.memsys = self.memsys
        self.unit: int | None = None  # on a chip: the unit (what one block occupies) this core belongs to
        self.blocks_run: list[int] = []
        self.block_starts: list[tuple[int, int]] = []  # (instructions issued before it, block)
        self.finished_at = 0
        self.block_idx, self.block_num = 0, 1
        self.subblock_idx, self.subblock_num = 0, 1
        self.max_steps = max_steps
        self.log: list[Instr] = []  # every recorded instruction, with keep_log only (see trace_log)
        self.alloc_log: list[tuple[int, str, int]] = []  # (cycle, buffer name, bytes in use), with keep_log
        self.printed: list[str] = []
        self.blocked_scalar: Instr | None = None
        self.slot_watch = None  # FIFO slot misuse checks of a consumer core (crosscore.SlotWatch), once it pops
        self.scalar = ScalarUnit(self, self._bind)
        self.recorder.add_core(self)
        if check_uninitialised:
            self.memory.uninit_hook = self._uninitialised

    @property
    def trace_log(self) -> list[Instr]:
        """Every instruction this core recorded, in record order: kept only when asked
        (``pyptoemu.run(..., keep_log=True)``), since it grows with the run."""
        if not self.keep_log:
            raise AttributeError("trace_log is kept only with pyptoemu.run(..., keep_log=True) (memory would "
                                 "grow with the run otherwise)")
        return self.log

    # hooks ----------------------------------------------------------------------------------

    def record(self, instr: Instr) -> None:
        """An instruction has started (or, for a set, fired): number it and hand it to the
        recorder (one order over the chip: a cross-core setter is recorded before its waiter)."""
        self.recorder.record(self, instr)

    def _bind(self, su: ScalarUnit, op: A.Op):
        """Bind ``op`` by the lowering its core kind takes for it (found once per module, ISA and
        machine: binding.SharedBinds); on a cube or vector core the other side's sections and
        kernels are no-ops."""
        key = (self.kind.name, op)
        lowering = self.lowerings.get(key)
        if lowering is None:
            lowering = lower_noop if self.build is not None and self.skips(op) else lowering_of(op, self.isa,
                                                                                              self.machine)
            if isinstance(lowering, Exception):  # raised where the op runs, a new one each time
                return fail_step(lowering)
            self.lowerings[key] = lowering
        return lowering(su, op)

    def skips(self, op: A.Op) -> bool:
        """Whether ``op`` belongs to the other side of a cube/vector split: a ``section`` of the other
        kind, or a call of a function whose ``pto.kernel_kind`` is the other kind (§4.13)."""
        if self.build is None:
            return False
        name = op.name
        if name.startswith("pto.section."):
            return name[12:] != self.build
        if name in ("func.call", "call"):
            callee = next((f for f in self.module.functions
                           if f.name == str(op.attrs.get("callee", "")).lstrip("@")), None)
            kind = kernel_kind(callee) if callee is not None else None
            return kind is not None and kind != self.build
        return False

    def record_scalar_access(self, op: A.Op, tile, reads: bool) -> None:
        instr = make_instr(0, op.name[4:], op.loc, "S", self.scalar.vclock)
        rng = ((tile.buffer.spec.name, tile.addr, tile.addr + tile.nbytes, None),)
        if reads:
            instr.reads = rng
        else:
            instr.writes = rng
            self.memory.note_writes(rng)
        instr.start = instr.end = instr.done = int(self.env.now)
        self.record_on_scalar(instr)

    def record_on_scalar(self, instr: Instr) -> None:
        """Record a memory access made by the scalar unit itself: it is ordered after every earlier
        scalar sync point and before everything the scalar unit issues later."""
        su = self.scalar
        instr.pidx = su.s_accesses
        instr.sepoch = len(su.epochs)
        su.s_accesses += 1
        su.issued_total += 1
        instr.iseq = su.issued_total
        su.epochs.append(("s", su.s_accesses))
        self.record(instr)

    def note_alloc(self, buf: OnChipBuffer) -> None:
        if not self.side_logs:
            return
        used = buf.used_bytes()
        if not self.alloc_log or self.alloc_log[-1][1:] != (buf.spec.name, used):
            self.scalar.note_alloc(buf.spec.name, used)

    def _uninitialised(self, instr: Instr, name: str, lo: int, hi: int) -> None:
        self.findings.add("uninitialised-read", "warning",
                          f"{instr.name} reads {name} bytes [{lo}, {hi}) that nothing wrote before",
                          [instr.loc], [instr.pipe], cycle=max(instr.start, 0))

    # running --------------------------------------------------------------------------------

    def start_block(self, fn: A.Function, args: list, block: int, block_num: int, sub: int,
                    sub_num: int, drained_last: AICore | None = None, dispatch: int = 0) -> simpy.Process:
        """Run one block of ``fn`` on this core (on a chip): a SimPy process that ends when every
        pipe has drained. Blocks on one core run one after another; the on-chip memories keep what
        the previous block left in them, as on hardware. ``drained_last``: the core of this block's
        unit whose previous block finished last (the unit was free then), if another core;
        ``dispatch``: the cycles the block scheduler took to hand this block over, up to now."""
        self.block_idx, self.block_num = block, block_num
        self.subblock_idx, self.subblock_num = sub, sub_num
        self.blocks_run.append(block)
        su = self.scalar
        self.block_starts.append((su.issued_total, block))
        su.resume_at_now()
        if self.blocks_run[:-1]:  # the previous block drained every pipe: order it before this one
            su.epochs.append(("all", su.issued))  # (a new dict each time: ScalarUnit.issued)
            self._record_block_start(drained_last, dispatch)
        return self.env.process(self._block_body(fn, args))

    def _record_block_start(self, drained_last: AICore | None, dispatch: int = 0) -> None:
        """A block that follows another on this core starts once its unit's previous block drained
        every pipe: recorded as a full barrier of no cost on the scalar unit, so the critical path
        of the new block continues from the previous block's last instruction (trace/bottleneck.py:
        a full barrier's path runs through what it drained; ``released_by`` names the unit's core
        that drained last when it is another: a core group's AIV waits for its AIC and the other
        AIV). Without it the path saw the new block's first issue with no sync point before it and
        charged every earlier cycle to the scalar unit issuing (97 blocks of vadd_spmd on 48 AIV,
        MTE2 busy 81% of the run: 'issue-bound: 52%'). ``dispatch``: the block scheduler's cycles
        between the unit becoming free and now, which the path charges as block dispatch (kept on
        the barrier's ``latency``: a zero-cost barrier has no other use for it)."""
        now = int(self.env.now)
        instr = make_instr(BARRIER, "block start", None, "S", now)
        instr.start = instr.end = instr.done = now
        instr.latency = dispatch
        instr.sepoch = len(self.scalar.epochs)  # after the previous block (the epoch start_block opened)
        if drained_last is not None and drained_last is not self:
            instr.released_by = drained_last
        self.record(instr)

    def _block_body(self, fn: A.Function, args: list):
        yield from self.scalar.run(fn, args)
        self.finished_at = int(self.env.now)

    def block_of(self, instr: Instr) -> int:
        """The block this core was running when it issued ``instr``."""
        block = self.block_starts[0][1] if self.block_starts else 0
        for issued, b in self.block_starts:
            if instr.iseq > issued:
                block = b
        return block

    def report_left_flags(self) -> None:
        for flag, setter in sorted(self.flags.state.items(), key=lambda kv: kv[1].seq):
            src, dst, eid = flag
            self.findings.add("flag-left-set", "warning",
                              f"flag {src}->{dst} EVENT_ID{eid} is still set when the kernel ends "
                              f"(set here, never waited)", [setter.loc], [src])

    def run(self, fn: A.Function, args: list) -> int:
        proc = self.env.process(self.scalar.run(fn, args))
        try:
            with QUIET:  # one np.errstate for the whole run, not one per tile op (pyptoemu.isa.ieee)
                self.env.run(until=proc)
        except RuntimeError as e:
            if "No scheduled events left" not in str(e):
                raise
            late = self.scalar.issue_blocked_until()  # as Chip._catch_up_blocked_issue
            if late > self.env.now:
                self.env.run(until=late)
            raise self._deadlock() from None
        self.commits.flush(float("inf"))
        self.report_left_flags()
        self.finished_at = int(self.env.now)
        self.recorder.drain(float("inf"))
        return int(self.env.now)

    def end_run(self) -> None:
        """The run is over (finished or faulted; its findings and statistics are taken): let go of
        what only running needed, which would otherwise stay in reference cycles with this core
        until the garbage collector finds them (about 900 objects per run of the stream kernel):
        the scalar unit's bound steps, and the pipes' processes, each waiting for an instruction
        that will not come. What the run's result reads (statistics, ``trace_log``, the pipes'
        last instructions) stays."""
        self.scalar.end_run()
        for pipe in self.pipes.values():
            pipe.process.close()

    def _deadlock(self) -> DeadlockError:
        """Name each blocked pipe, the wait it is stuck on, and why no set can come: no set of that
        flag exists in the kernel, or the setting pipe is itself blocked (the cycle of waits)."""
        lines, locs, blocked = self.blocked_report("")
        msg = "deadlock: no flag can ever be set for the waits below (nothing left to run)\n" + "\n".join(lines)
        err = DeadlockError(msg, locs[0] if locs else None)
        self.findings.add("deadlock", "error", msg.replace("\n", " "), locs, blocked,
                          cycle=int(self.env.now))
        return err

    def blocked(self) -> list[Instr]:
        """The cross-core waits this core is stuck in (pipes and scalar unit)."""
        out = [p.current for p in self.pipes.values()
               if p.current is not None and p.current.kind == XWAIT and is_issued(p.current)]
        if self.blocked_scalar is not None and self.blocked_scalar.kind == XWAIT:
            out.append(self.blocked_scalar)
        return out

    def blocked_report(self, who_prefix: str) -> tuple[list[str], list, list[str]]:
        """(lines, locations, blocked pipe names) of what this core waits on at a deadlock.
        ``who_prefix`` names the core on a chip (``"AIV3 "``); cross-core waits describe their
        peer (``Instr.flag`` is then a :class:`~pyptoemu.core.pipe.Gate`)."""
        blocked: dict[str, Instr] = {n: p.current for n, p in self.pipes.items()  # (not one issued after a stall)
                                     if p.current is not None and p.current.kind in (WAIT, XWAIT)
                                     and is_issued(p.current)}
        if self.blocked_scalar is not None:
            blocked["S"] = self.blocked_scalar
        static_sets = _static_set_flags(self.module, self.machine.event_ids)
        lines, locs = [], []
        stall = self.scalar.blocked_issue()
        full = stall.target if stall is not None else None
        if stall is not None:  # the scalar unit holds an instruction its pipe's queue has no room for
            held = stall.held
            lines.append(f"  {who_prefix}scalar unit (S) blocked at {held.loc}: cannot issue {held.name}: the "
                         f"{full.name} issue queue is full ({full.depth} entries, issue_queue_depth)")
            locs.append(held.loc)
        flag_waits = {n: c for n, c in blocked.items() if c.kind == WAIT}
        for name, cur in blocked.items():
            who = who_prefix + ("scalar unit (S)" if name == "S" else f"pipe {name}")
            if cur.kind == XWAIT:
                lines.append(f"  {who} blocked at {cur.loc}: {cur.name} {cur.flag.describe()}")
                locs.append(cur.loc)
                continue
            src, dst, eid = cur.flag
            why = ""
            if (src, dst, eid) not in static_sets:
                why = " - no set_flag of this flag exists in the kernel"
                self.findings.add("wait-never-set", "error",
                                  f"wait_flag {src}->{dst} EVENT_ID{eid} waits for a flag no instruction sets",
                                  [cur.loc], [name])
            elif src in blocked:
                why = f" - its setter pipe {src} is itself blocked"
            elif full is not None:
                why = f" - the scalar unit has not issued its set yet (stalled on the full {full.name} queue)"
            lines.append(f"  {who} blocked at {cur.loc}: wait_flag {src}->{dst} EVENT_ID{eid}{why}")
            locs.append(cur.loc)
        cycle = _wait_cycle(flag_waits)
        if cycle:
            lines.append(f"  {who_prefix}cycle of waits: " + " -> ".join(cycle))
        queued = {n: k for n, p in self.pipes.items() if (k := sum(map(is_issued, p.queue)))}
        if queued:
            lines.append(f"  {who_prefix}instructions still queued: "
                         + ", ".join(f"{n}: {c}" for n, c in queued.items()))
        return lines, locs, list(blocked) + (["S"] if full is not None and "S" not in blocked else [])


def _wait_cycle(blocked: dict[str, Instr]) -> list[str]:
    """A cycle among blocked pipes, each waiting on a flag the next one should set."""
    for start in blocked:
        path, p = [start], start
        while p in blocked:
            p = blocked[p].flag[0]
            if p == start:
                return [*path, start]
            if p in path:
                break
            path.append(p)
    return []


def _static_set_flags(module: A.Module, machine_ids: int) -> set:
    """(src, dst, id) of every set_flag / record_event written with a constant id."""
    out = set()
    stack = [f.body for f in module.functions]
    while stack:
        region = stack.pop()
        for op in region.ops:
            stack.extend(op.regions)
            if op.name in ("pto.set_flag", "pto.record_event", "pto.set_flag_dyn"):
                items = op.attrs.get("args", [])
                try:
                    src, dst = pipe_of(items[0], op.loc), pipe_of(items[1], op.loc)
                except (IndexError, PtoError):
                    continue
                eid = event_of(items[2], op.loc) if len(items) > 2 else None
                if eid is None:  # a runtime id: it could be any
                    out.update((src, dst, i) for i in range(machine_ids))
                else:
                    out.add((src, dst, eid))
    return out
