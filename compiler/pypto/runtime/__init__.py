"""``pypto.runtime.run``: compile a program, run orchestration on the host and kernels on the emulator.

It returns the emulator's one result type (:class:`pyptoemu.RunResult`) and follows the emulator's
fault rule: :class:`pyptoemu.KernelFault` whenever ``pyptoemu run`` would exit 1 (a kernel faulted, or
a launch ended with an error finding such as a race; ``races="warn"`` returns instead), carrying the
program's result up to that launch.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ptoisa.machine import load_machine
from pypto.enums import FunctionType, ParamDirection
from pypto.errors import RuntimeFault
from pypto.ir.compiler import compile_program
from pypto.ir.stmt import Function, Program
from pypto.ir.types import ScalarType, TensorType, static_shape
from pypto.passes.manager import OptimizationStrategy, as_strategy
from pypto.runtime.config import RunConfig
from pypto.runtime.interpreter import Interpreter
from pypto.runtime.launch import Launcher, LaunchStats
from pyptoemu.api import attach_result, coerce_input
from pyptoemu.errors import FindingsError, KernelFault
from pyptoemu.result import PipeStats, RunResult, bound_of


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
                a = coerce_input(f"'{p.name}'", a, np.dtype(p.type.dtype.numpy))
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
    races: str = "error",
) -> RunResult:
    """Compile and run ``program``; ``arrays`` bind the entry's parameters in order.

    NumPy arrays must have the parameter's dtype (else :class:`pyptoemu.InputError` naming both, as
    ``pyptoemu.run`` does); lists and scalars are converted. ``races`` is passed to every launch.
    """
    strat = as_strategy(strategy)
    # kernels carry the machine's arch (pto.target_arch), so that the emulator runs them on it
    compiled = compile_program(program, strat, with_cpp=False, target_arch="a5" if machine == "a5" else "a2a3")
    prog = compiled.program
    func = prog.get_function(entry) if entry else default_entry(prog)
    if func is None:
        raise RuntimeFault(f"program '{program.name}' has no function '{entry}'")
    args = _bind(func, arrays)
    stats = LaunchStats()
    sync = "auto" if strat is OptimizationStrategy.PTOAS else "asis"
    launcher = Launcher(compiled.pto, sync, machine, trace, stats, races=races)
    named = {p.name: a for p, a in zip(func.params, args, strict=False) if isinstance(a, np.ndarray)}
    try:
        outputs = Interpreter(prog, launcher).call(func, args)
    except KernelFault as fault:
        faulted = not isinstance(fault, FindingsError)  # a race or double set: the launch completed
        raise attach_result(fault, program_result(func, stats, machine, (), named, faulted=faulted)) from None
    return program_result(func, stats, machine, tuple(outputs), named, faulted=False)


def program_result(func: Function, stats: Any, machine: str, outputs: tuple, named: dict, faulted: bool) -> RunResult:
    """The one result of a program run: cycles when its last launch finishes on the chip (launches
    overlap where the task graph allows, :mod:`pypto.runtime.timeline`); pipes, cores and findings
    of every launch."""
    mach = load_machine(machine)
    pipes = {k: PipeStats(b, n) for k, (b, n) in stats.pipes.items()}
    errors = any(f.severity == "error" for f in stats.findings)
    return RunResult(
        entry=func.name, cycles=stats.cycles, time_us=mach.cycles_to_us(stats.cycles), pipes=pipes,
        bound_pipe=bound_of(pipes) if pipes else "S", outputs=outputs, findings=list(stats.findings),
        trace=stats.traces[0] if stats.traces else None, cores=list(stats.cores), machine=mach.name,
        status="faulted" if faulted else "findings" if errors else "ok",
        instructions=sum(p.instructions for p in pipes.values()), launches=stats.launches,
        traces=list(stats.traces), arrays=named,
    )


__all__ = ["PipeStats", "RunConfig", "RunResult", "default_entry", "program_result", "run"]
