"""Running one InCore kernel on the emulator and mapping its buffers back to NumPy arrays."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

import pyptoemu
from ptoisa.errors import Loc
from ptoisa.machine import load_machine
from pypto.codegen.pto import PTOCodegen
from pypto.enums import ParamDirection
from pypto.errors import RuntimeFault
from pypto.ir import expr as E
from pypto.ir import stmt as St
from pypto.ir.types import ScalarType, TensorType
from pypto.ir.visitor import walk_stmts
from pypto.passes.analysis import memref_of
from pypto.runtime.timeline import Timeline
from pyptoemu.errors import FindingsError, VerifyError


@dataclass
class LaunchStats:
    """A program's launches so far: ``cycles`` is when the last one finishes on the chip, as the
    ``timeline`` places them (independent launches overlap on free cores), not their sum."""

    cycles: int = 0
    pipes: dict = field(default_factory=dict)
    findings: list = field(default_factory=list)
    traces: list = field(default_factory=list)
    cores: list = field(default_factory=list)
    launches: int = 0
    timeline: Timeline | None = None


def _dyn_args(func: St.Function) -> list[tuple[int, int]]:
    """(param index, axis) of each trailing dynamic-dim argument, in codegen order."""
    out: list = []
    seen: list = []
    for i, p in enumerate(func.params):
        for axis, d in enumerate(getattr(p.type, "shape", ())):
            if isinstance(d, E.Var) and isinstance(p.type, TensorType) and not any(d is s for s in seen):
                seen.append(d)
                out.append((i, axis))
    return out


def _returned_params(func: St.Function) -> list[int | None]:
    rets = [s for s in walk_stmts(func.body) if isinstance(s, St.ReturnStmt)]
    if not rets:
        return []
    out = []
    for v in rets[-1].value:
        m = memref_of(v)
        idx = next((i for i, p in enumerate(func.params) if m is not None and memref_of(p) is m), None)
        out.append(idx)
    return out


def _has_sync_ops(func: St.Function) -> bool:
    for s in walk_stmts(func.body):
        if isinstance(s, St.EvalStmt) and isinstance(s.expr, E.Call) and s.expr.op.name.startswith("system."):
            return True
    return False


class Launcher:
    def __init__(self, pto: dict[str, str], strategy_sync: str, machine: str, trace: str | None, stats: LaunchStats,
                 races: str = "error"):
        self.pto = pto
        self.sync = strategy_sync
        self.machine = machine
        self.trace = trace
        self.stats = stats
        self.races = races
        if stats.timeline is None:
            stats.timeline = Timeline(load_machine(machine))

    def _trace_path(self) -> str | None:
        if self.trace is None:
            return None
        n = self.stats.launches
        if n == 0:
            return str(self.trace)
        base, dot, ext = str(self.trace).rpartition(".")
        return f"{base}_{n}.{ext}" if dot else f"{self.trace}_{n}"

    def _account(self, r, func: St.Function, arrays: dict) -> None:
        """Place one launch on the program's timeline and add its pipe counts, findings, cores and
        trace to the program's totals."""
        reads, writes = [], []
        for i, a in arrays.items():
            d = ParamDirection(func.param_directions[i])
            if d is not ParamDirection.Out:
                reads.append(a)
            if d is not ParamDirection.In:
                writes.append(a)
        timeline = self.stats.timeline
        timeline.launch(reads, writes, list(r.cores), int(r.cycles))
        self.stats.launches += 1
        self.stats.cycles = timeline.end
        for name, ps in r.pipes.items():
            busy, count = self.stats.pipes.get(name, (0, 0))
            self.stats.pipes[name] = (busy + ps.busy_cycles, count + ps.instructions)
        self.stats.findings.extend(r.findings)
        self.stats.cores.extend(r.cores)
        if r.trace:
            self.stats.traces.append(r.trace)

    def __call__(self, func: St.Function, args: list, blocks: int = 1) -> tuple:
        """Run kernel ``func`` on the chip as ``blocks`` blocks (each sees its get_block_idx) and copy
        what it wrote back into the caller's arrays."""
        if len(args) != len(func.params):
            raise RuntimeFault(f"{func.name} takes {len(func.params)} arguments, got {len(args)}", func.span)
        inputs, scalars, arrays = {}, {}, {}
        for i, (p, a) in enumerate(zip(func.params, args, strict=False)):
            if isinstance(p.type, TensorType):
                if not isinstance(a, np.ndarray):
                    raise RuntimeFault(f"{func.name}: argument '{p.name}' must be an array", func.span)
                arrays[i] = a
                inputs[f"arg{i}"] = np.ascontiguousarray(a)
            elif isinstance(p.type, ScalarType):
                scalars[f"arg{i}"] = a
        n = len(func.params)
        for k, (i, axis) in enumerate(_dyn_args(func)):
            scalars[f"arg{n + k}"] = int(args[i].shape[axis])
        trace = self._trace_path()
        # Under PTOAS the emulator inserts synchronisation like ptoas does, unless the kernel was
        # synchronised by hand (pl.system.*): then it runs as written and checks the hand-written sync.
        sync = "asis" if self.sync == "auto" and _has_sync_ops(func) else self.sync
        try:
            r = pyptoemu.run(
                self.pto[func.name], inputs=inputs, args=scalars, entry=func.name, machine=self.machine,
                trace=trace, sync=sync, races=self.races, blocks=blocks,
            )
        except pyptoemu.KernelFault as fault:
            if fault.result is not None:
                self._account(fault.result, func, arrays)
            _locate_in_source(fault, func, self.pto[func.name])
            raise
        except VerifyError as fault:  # the emulator's checks before running: each error at the user's line
            for e in [*getattr(fault, "errors", ()), fault]:  # a ModuleVerifyError lists them all
                _locate_in_source(e, func, self.pto[func.name])
            raise
        except pyptoemu.InputError as fault:  # the data does not fit what the kernel does with it
            _locate_in_source(fault, func, self.pto[func.name])
            raise
        self._account(r, func, arrays)
        for key, out in r.outputs.items():
            i = int(key[3:])
            if i in arrays:
                arrays[i][...] = np.asarray(out).reshape(arrays[i].shape)
        return tuple(arrays.get(i) if i is not None else None for i in _returned_params(func))


_TARGET_ARCH = re.compile(r'pto\.target_arch\s*=\s*"(\w+)"')


_PTO_LOC = re.compile(r"<string>:(\d+):(\d+)")


def _locate_in_source(fault: pyptoemu.PtoError, func: St.Function, text: str) -> None:
    """Point a fault the emulator located at a line of the generated .pto at the user's source line
    that produced that op, keeping the .pto line in the message; left as is when no line maps. A run
    that ended with error findings (a race between blocks) has no location of its own: it takes its
    first finding's, and each .pto location in the findings' text is replaced by the user's line."""
    arch = _TARGET_ARCH.search(text)
    lines = PTOCodegen(arch.group(1) if arch else "a2a3").source_lines(func, text)
    loc = fault.loc
    if loc is None and isinstance(fault, FindingsError):
        first = _PTO_LOC.search(fault.message)
        loc = Loc("<string>", int(first.group(1)), int(first.group(2))) if first else None
        if loc is not None and lines.get(loc.line) is not None:

            def user(m: re.Match) -> str:
                span = lines.get(int(m.group(1)))
                return f"{span.filename}:{span.line}:{span.col}" if span is not None else m.group(0)

            fault.message = _PTO_LOC.sub(user, fault.message)
    if loc is None or loc.file != "<string>":
        return
    span = lines.get(loc.line)
    if span is None:
        return
    fault.loc = Loc(span.filename, span.line, span.col)
    fault.message = f"{fault.message} (in kernel '{func.name}', generated .pto line {loc.line})"
    fault.args = (fault.message,)
