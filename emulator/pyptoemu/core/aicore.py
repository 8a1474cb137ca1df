"""One AI core: wires the memories, the pipes, the flags and the scalar unit, and runs a function.

``AICore.run(fn, args)`` returns when every pipe has drained; a wait that can never be satisfied
empties SimPy's schedule, which is turned into a :class:`DeadlockError` naming each blocked pipe and
the instruction it waits on.
"""

from __future__ import annotations

import numpy as np
import simpy

from ptoisa.machine import Machine
from ptoisa.text import ast as A
from pyptoemu.check.findings import Findings
from pyptoemu.core.binding import bind_op
from pyptoemu.core.memory import GMBuffer, OnChipBuffer, Ptr
from pyptoemu.core.pipe import WAIT, CommitQueue, Flags, Instr, Pipe
from pyptoemu.core.pipenames import event_of, pipe_of
from pyptoemu.core.scalar import ScalarUnit
from pyptoemu.errors import DeadlockError, InputError, Loc, PtoError

# A resource limit of the emulator itself (not of the modelled machine): a typo in a shape should
# not make it try to allocate terabytes of random data.
MAX_GENERATED_BYTES = 2**30


class Memories:
    """GM buffers per pointer argument plus the on-chip buffers of the machine."""

    def __init__(self, machine: Machine, rng_seed: int):
        self.onchip = {loc: OnChipBuffer(spec) for loc, spec in machine.buffers.items()}
        self.written = {spec.name: np.zeros(spec.size, dtype=bool) for spec in machine.buffers.values()}
        self.gm: dict[int, GMBuffer] = {}
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
        have = 0 if gm.data is None else gm.data.size
        if need <= have:
            return
        if gm.given:
            raise InputError(f"input {gm.name} holds {have} elements of {gm.dtype_name} but the view "
                             f"made here reaches element {need - 1}", loc)
        if need * gm.dtype.itemsize > MAX_GENERATED_BYTES:
            raise InputError(f"the view made here over {gm.name} reaches {need} elements "
                             f"({need * gm.dtype.itemsize / 2**30:.1f} GiB); the emulator generates at most "
                             f"{MAX_GENERATED_BYTES // 2**30} GiB of stand-in data per argument: pass the "
                             f"input (--input {gm.name}=FILE.npy) if this size is intended", loc)
        extra = random_data(gm.dtype_name, gm.dtype, need - have,
                            np.random.default_rng([self.seed, gm.index, have]))
        gm.data = extra if gm.data is None else np.concatenate([gm.data, extra])

    def note_reads(self, reads: tuple, instr: Instr) -> None:
        if self.uninit_hook is None:
            return
        written = self.written
        for name, lo, hi, _ in reads:
            w = written.get(name)
            if w is not None and not w[lo:hi].all():
                self.uninit_hook(instr, name, lo, hi)

    def note_writes(self, writes: tuple) -> None:
        written = self.written
        for name, lo, hi, _ in writes:
            w = written.get(name)
            if w is not None:
                w[lo:hi] = True


def random_data(dtype_name: str, dtype: np.dtype, n: int, rng: np.random.Generator) -> np.ndarray:
    """Seeded stand-in data: normal floats, small ints (0..7 unsigned, -8..7 signed), random bools."""
    if dtype == np.bool_:
        return rng.integers(0, 2, n).astype(bool)
    if dtype.kind in "iu":
        lo = 0 if dtype.kind == "u" else -8
        return rng.integers(lo, 8, n).astype(dtype)
    if dtype == np.float32:
        return rng.standard_normal(n, dtype=np.float32)
    return rng.standard_normal(n, dtype=np.float32).astype(dtype)


class AICore:
    def __init__(self, module: A.Module, isa, machine: Machine, seed: int = 0, max_steps: int = 10_000_000,
                 check_uninitialised: bool = True):
        self.module = module
        self.isa = isa
        self.machine = machine
        self.env = simpy.Environment()
        self.findings = Findings()
        self.commits = CommitQueue()
        self.flags = Flags(self.env, self.findings)
        self.memory = Memories(machine, seed)
        self.pipes = {
            p: Pipe(self, p, machine.in_order.get(p, True), machine.costs)
            for p in machine.pipes if p != "S"
        }
        self.block_idx, self.block_num = 0, 1
        self.subblock_idx, self.subblock_num = 0, 1
        self.max_steps = max_steps
        self.trace_log: list[Instr] = []
        self.alloc_log: list[tuple[int, str, int]] = []  # (cycle, buffer name, bytes in use)
        self.printed: list[str] = []
        self.blocked_scalar: Instr | None = None
        self.scalar = ScalarUnit(self, bind_op)
        self._seq = 0
        if check_uninitialised:
            self.memory.uninit_hook = self._uninitialised

    # hooks ----------------------------------------------------------------------------------

    def record(self, instr: Instr) -> None:
        self._seq += 1
        instr.seq = self._seq
        self.trace_log.append(instr)

    def record_scalar_access(self, op: A.Op, tile, reads: bool) -> None:
        instr = Instr(0, op.name[4:], op.loc, "S", self.scalar.vclock)
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
        used = buf.used_bytes()
        if not self.alloc_log or self.alloc_log[-1][1:] != (buf.spec.name, used):
            self.alloc_log.append((self.scalar.vclock, buf.spec.name, used))

    def _uninitialised(self, instr: Instr, name: str, lo: int, hi: int) -> None:
        self.findings.add("uninitialised-read", "warning",
                          f"{instr.name} reads {name} bytes [{lo}, {hi}) that nothing wrote before",
                          [instr.loc], [instr.pipe], cycle=max(instr.start, 0))

    # running --------------------------------------------------------------------------------

    def run(self, fn: A.Function, args: list) -> int:
        proc = self.env.process(self.scalar.run(fn, args))
        try:
            self.env.run(until=proc)
        except RuntimeError as e:
            if "No scheduled events left" not in str(e):
                raise
            raise self._deadlock() from None
        self.commits.flush(float("inf"))
        for flag, setter in sorted(self.flags.state.items(), key=lambda kv: kv[1].seq):
            src, dst, eid = flag
            self.findings.add("flag-left-set", "warning",
                              f"flag {src}->{dst} EVENT_ID{eid} is still set when the kernel ends "
                              f"(set here, never waited)", [setter.loc], [src])
        return int(self.env.now)

    def _deadlock(self) -> DeadlockError:
        """Name each blocked pipe, the wait it is stuck on, and why no set can come: no set of that
        flag exists in the kernel, or the setting pipe is itself blocked (the cycle of waits)."""
        blocked: dict[str, Instr] = {n: p.current for n, p in self.pipes.items()
                                     if p.current is not None and p.current.kind == WAIT}
        if self.blocked_scalar is not None:
            blocked["S"] = self.blocked_scalar
        static_sets = _static_set_flags(self.module, self.machine.event_ids)
        lines, locs = [], []
        for name, cur in blocked.items():
            src, dst, eid = cur.flag
            who = "scalar unit (S)" if name == "S" else f"pipe {name}"
            why = ""
            if (src, dst, eid) not in static_sets:
                why = " - no set_flag of this flag exists in the kernel"
                self.findings.add("wait-never-set", "error",
                                  f"wait_flag {src}->{dst} EVENT_ID{eid} waits for a flag no instruction sets",
                                  [cur.loc], [name])
            elif src in blocked:
                why = f" - its setter pipe {src} is itself blocked"
            lines.append(f"  {who} blocked at {cur.loc}: wait_flag {src}->{dst} EVENT_ID{eid}{why}")
            locs.append(cur.loc)
        cycle = _wait_cycle(blocked)
        if cycle:
            lines.append("  cycle of waits: " + " -> ".join(cycle))
        queued = {n: len(p.queue) for n, p in self.pipes.items() if p.queue}
        if queued:
            lines.append("  instructions still queued: " + ", ".join(f"{n}: {c}" for n, c in queued.items()))
        msg = "deadlock: no flag can ever be set for the waits below (nothing left to run)\n" + "\n".join(lines)
        err = DeadlockError(msg, locs[0] if locs else None)
        self.findings.add("deadlock", "error", msg.replace("\n", " "), locs, list(blocked),
                          cycle=int(self.env.now))
        return err


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
