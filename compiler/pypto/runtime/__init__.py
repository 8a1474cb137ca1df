"""``pypto.runtime.run``: compile a program, run orchestration on the host and kernels on the emulator."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pypto.enums import FunctionType, ParamDirection
from pypto.errors import RuntimeFault
from pypto.ir.compiler import compile_program
from pypto.ir.stmt import Function, Program
from pypto.ir.types import ScalarType, TensorType, static_shape
from pypto.passes.manager import OptimizationStrategy, as_strategy
from pypto.runtime.config import RunConfig
from pypto.runtime.interpreter import Interpreter
from pypto.runtime.launch import Launcher, LaunchStats


@dataclass
class PipeStats:
    busy_cycles: int
    instructions: int


@dataclass
class RunResult:
    outputs: tuple
    cycles: int
    pipes: dict
    findings: list
    trace: str | None
    arrays: dict = field(default_factory=dict)
    launches: int = 0

    def errors(self) -> list:
        return [f for f in self.findings if getattr(f, "severity", "") == "error"]


def default_entry(program: Program) -> Function:
    orch = [f for f in program.functions_list if f.type is FunctionType.Orchestration]
    if len(orch) == 1:
        return orch[0]
    if len(program.functions_list) == 1:
        return program.functions_list[0]
    raise RuntimeFault(f"program '{program.name}' has several candidate entries; pass entry=...")


def _bind(func: Function, arrays: tuple) -> list:
    params = list(func.params)
    if len(arrays) > len(params):
        raise RuntimeFault(f"{func.name} takes {len(params)} arguments, got {len(arrays)}", func.span)
    bound = []
    for i, p in enumerate(params):
        if i < len(arrays):
            a = arrays[i]
            if isinstance(p.type, TensorType):
                a = np.asarray(a, dtype=p.type.dtype.numpy)
                shape = static_shape(p.type)
                if shape is not None and tuple(a.shape) != shape:
                    raise RuntimeFault(f"argument '{p.name}' has shape {a.shape}, expected {shape}", func.span)
                a = a.copy()
            bound.append(a)
        elif func.param_directions[i] is ParamDirection.Out and isinstance(p.type, TensorType):
            shape = static_shape(p.type)
            if shape is None:
                raise RuntimeFault(f"output '{p.name}' has a dynamic shape; pass it explicitly", func.span)
            bound.append(np.zeros(shape, dtype=p.type.dtype.numpy))
        else:
            what = "scalar" if isinstance(p.type, ScalarType) else "input"
            raise RuntimeFault(f"missing {what} argument '{p.name}' for {func.name}", func.span)
    return bound


def run(
    program: Program,
    *arrays: Any,
    entry: str | None = None,
    strategy: Any = OptimizationStrategy.Default,
    machine: str = "a2a3",
    trace: str | None = None,
) -> RunResult:
    """Compile and run ``program``; ``arrays`` bind the entry's parameters in order."""
    strat = as_strategy(strategy)
    compiled = compile_program(program, strat, with_cpp=False)
    prog = compiled.program
    func = prog.get_function(entry) if entry else default_entry(prog)
    if func is None:
        raise RuntimeFault(f"program '{program.name}' has no function '{entry}'")
    args = _bind(func, arrays)
    stats = LaunchStats()
    sync = "auto" if strat is OptimizationStrategy.PTOAS else "asis"
    launcher = Launcher(compiled.pto, sync, machine, trace, stats)
    outputs = Interpreter(prog, launcher).call(func, args)
    named = {p.name: a for p, a in zip(func.params, args, strict=False) if isinstance(a, np.ndarray)}
    pipes = {k: PipeStats(b, n) for k, (b, n) in stats.pipes.items()}
    return RunResult(
        tuple(outputs), stats.cycles, pipes, stats.findings, stats.traces[0] if stats.traces else None, named,
        stats.launches,
    )


__all__ = ["PipeStats", "RunConfig", "RunResult", "default_entry", "run"]
