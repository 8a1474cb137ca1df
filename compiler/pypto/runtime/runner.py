"""``pypto.runtime.run`` (spec pypto-jit §10.3): compile a program, run it in place, return a callable.

``run(program, *tensors, config=None, ...)`` compiles ``program`` once and, when tensors are given
(and ``config.codegen_only`` is not set), runs its entry on them **in place**: NumPy arrays and torch
CPU tensors are shared, not copied, so ``Out``/``InOut`` parameters land in the caller's objects. It
returns a :class:`ProgramRun`: callable like a ``CompiledProgram`` (``compiled = run(prog,
config=cfg); out = compiled(*inputs)``) and carrying the last run's :class:`pyptoemu.RunResult`
fields (``.outputs``, ``.cycles``, ...). Faults follow the emulator's rule:
:class:`pyptoemu.KernelFault` whenever ``pyptoemu run`` would exit 1 (``races="warn"`` returns
instead), carrying the program's result up to that launch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ptoisa.machine import load_machine
from pypto.errors import RuntimeFault
from pypto.ir.compiler import compile_program, register_runner
from pypto.ir.entry import default_entry, pure_out_indices
from pypto.ir.stmt import Function, Program
from pypto.ir.types import ScalarType, TensorType, static_shape
from pypto.passes.manager import OptimizationStrategy, as_strategy
from pypto.runtime.arrays import as_numpy, write_back
from pypto.runtime.config import RunConfig
from pypto.runtime.interpreter import Interpreter
from pypto.runtime.launch import Launcher, LaunchStats
from pyptoemu.api import attach_result, coerce_input
from pyptoemu.errors import FindingsError, KernelFault
from pyptoemu.result import PipeStats, RunResult, bound_of


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


def _is_tensor_object(value: Any) -> bool:
    return isinstance(value, np.ndarray) or type(value).__module__.startswith("torch")


def _tensor_arg(func: Function, p: Any, value: Any) -> tuple[np.ndarray, Any]:
    """(the array the run works on, the caller's object to copy it back into, or None)."""
    want = np.dtype(p.type.dtype.numpy)
    if _is_tensor_object(value):
        work, writer = as_numpy(value)
        coerce_input(f"'{p.name}'", work, want)  # the one dtype rule: refuse, never convert
    else:  # lists and Python numbers: converted, nothing to write back into
        work, writer = coerce_input(f"'{p.name}'", value, want), None
    shape = static_shape(p.type)
    if shape is not None and tuple(work.shape) != shape:
        raise RuntimeFault(f"argument '{p.name}' has shape {work.shape}, expected {shape}", func.span)
    return work, writer


def _bind(func: Function, values: tuple) -> tuple[list, list]:
    """(the entry's arguments, [(array, caller object)] to write back) for the in-place style (every
    parameter given) or the return style (every parameter but the pure ``Out`` ones, which are
    allocated as zeros); other counts keep the older rule: trailing ``Out`` parameters may be left out."""
    params = list(func.params)
    outs = pure_out_indices(func)
    if len(values) > len(params):
        raise RuntimeFault(f"{func.name} takes {len(params)} arguments (or {len(params) - len(outs)} without its "
                           f"outputs), got {len(values)}", func.span)
    given = iter(values)
    skip = set(outs) if outs and len(values) == len(params) - len(outs) else set()
    bound, back = [], []
    for i, p in enumerate(params):
        if i not in skip:
            v = next(given, given)
            if v is not given:
                if isinstance(p.type, TensorType):
                    work, writer = _tensor_arg(func, p, v)
                    back.append((work, writer))
                    v = work
                bound.append(v)
                continue
        if i in outs:
            shape = static_shape(p.type)
            if shape is None:
                raise RuntimeFault(f"output '{p.name}' has a dynamic shape; pass it explicitly", func.span)
            bound.append(np.zeros(shape, dtype=p.type.dtype.numpy))
            continue
        what = "scalar" if isinstance(p.type, ScalarType) else "input"
        raise RuntimeFault(f"missing {what} argument '{p.name}' for {func.name}", func.span)
    return bound, back


class _DfxOpts:
    """Device DFX switches (spec pypto-jit §10.4; pypto-lib builds one from its flags when one is set:
    ``enable_dump_args``, ``enable_pmu``, ...). They steer hardware dumps and counters; the
    emulator's own trace and findings cover what they show, so they are accepted and kept only."""

    def __init__(self, **flags: Any):
        self.flags = flags

    def __repr__(self) -> str:
        return f"_DfxOpts({', '.join(f'{k}={v!r}' for k, v in self.flags.items())})"


@dataclass
class _Options:
    strategy: Any
    machine: str
    trace: str | None
    races: str


class ProgramRun(RunResult):
    """A compiled program: call it to run (in place, or return style), read the last run's result.

    ``program_run(*tensors)`` runs the entry: with every parameter given it writes ``Out``/``InOut``
    tensors in place and returns ``None``; with only the parameters that are not pure ``Out`` it
    allocates those as zeros and returns them (one array, or a tuple). Attributes of the last
    :class:`pyptoemu.RunResult` (``outputs``, ``cycles``, ``time_us``, ``findings``, ...) are its own
    (it is a ``RunResult``, so code written for the older ``run`` keeps working; ``result`` is the
    record itself); before any run, reading one says so.
    """

    __hash__ = object.__hash__

    def __init__(self, compiled: Any, entry: Function, options: _Options, config: RunConfig | None):
        self.compiled = compiled
        self.program = compiled.program
        self.entry_function = entry
        self.options = options
        self.config = config
        self.result: RunResult | None = None
        self.param_names = [p.name for p in entry.params]
        self.output_indices = pure_out_indices(entry)
        self.platform = config.platform if config is not None else None

    def __call__(self, *tensors: Any, config: RunConfig | None = None) -> Any:
        opts = self.options
        if config is not None:
            opts = _Options(opts.strategy, config.machine, config.trace_path(), opts.races)
        return_style = bool(self.output_indices) and len(tensors) == len(self.param_names) - len(self.output_indices)
        args, back = _bind(self.entry_function, tensors)
        self._execute(args, opts)
        for work, writer in back:
            write_back(work, writer)
        if not return_style:
            return None
        produced = tuple(args[i] for i in self.output_indices)
        return produced[0] if len(produced) == 1 else produced

    def _execute(self, args: list, opts: _Options) -> tuple:
        func = self.entry_function
        stats = LaunchStats()
        sync = "auto" if opts.strategy is OptimizationStrategy.PTOAS else "asis"
        launcher = Launcher(self.compiled.pto, sync, opts.machine, opts.trace, stats, races=opts.races)
        named = {p.name: a for p, a in zip(func.params, args, strict=False) if isinstance(a, np.ndarray)}
        try:
            outputs = Interpreter(self.program, launcher).call(func, args)
        except KernelFault as fault:
            faulted = not isinstance(fault, FindingsError)  # a race or double set: the launch completed
            self._record(program_result(func, stats, opts.machine, (), named, faulted=faulted))
            raise attach_result(fault, self.result) from None
        self._record(program_result(func, stats, opts.machine, tuple(outputs), named, faulted=False))
        return tuple(outputs)

    def _record(self, result: RunResult) -> None:
        self.result = result
        for name in RunResult.__dataclass_fields__:
            setattr(self, name, getattr(result, name))

    def __getattr__(self, name: str) -> Any:
        # only reached for a RunResult field before the first run
        if name in RunResult.__dataclass_fields__:
            raise AttributeError(f"'{name}': program '{self.program.name}' has not run yet; call it with its "
                                 "tensors first")
        raise AttributeError(f"'ProgramRun' object has no attribute '{name}'")

    def __repr__(self) -> str:
        state = f"status={self.result.status!r}, cycles={self.result.cycles}" if self.result else "not run"
        return f"ProgramRun({self.program.name}.{self.entry_function.name}, {state})"


def run(
    program: Program,
    *tensors: Any,
    config: RunConfig | None = None,
    entry: str | None = None,
    strategy: Any = None,
    machine: str | None = None,
    trace: str | None = None,
    races: str = "error",
) -> ProgramRun:
    """Compile ``program`` and, given ``tensors`` (its entry's parameters in order), run it in place.

    ``config`` supplies the platform (its machine model), the strategy and the trace as a jit call
    takes them; the project's keywords ``strategy=``, ``machine=`` and ``trace=`` override it.
    NumPy arrays must have the parameter's dtype (else :class:`pyptoemu.InputError` naming both, as
    ``pyptoemu.run`` does); lists and scalars are converted. ``races`` is passed to every launch.
    """
    opts = _Options(
        as_strategy(strategy if strategy is not None else config.strategy if config is not None
                    else OptimizationStrategy.Default),
        machine or (config.machine if config is not None else "a2a3"),
        trace if trace is not None else config.trace_path() if config is not None else None,
        races,
    )
    # kernels carry the machine's arch (pto.target_arch), so that the emulator runs them on it
    compiled = compile_program(program, opts.strategy, with_cpp=False,
                               target_arch="a5" if opts.machine == "a5" else "a2a3")
    func = compiled.program.get_function(entry) if entry else default_entry(compiled.program)
    if func is None:
        raise RuntimeFault(f"program '{program.name}' has no function '{entry}'")
    runner = ProgramRun(compiled, func, opts, config)
    codegen_only = config is not None and config.codegen_only
    if not codegen_only and (tensors or not func.params or len(pure_out_indices(func)) == len(func.params)):
        runner(*tensors)
    return runner


def _program_run_of(compiled: Any, entry: Function, machine: str) -> ProgramRun:
    """The runner behind a callable ``ir.compile`` result (spec pypto-jit §10.2): the same
    :class:`ProgramRun` that ``run`` returns, over the module ``ir.compile`` already built."""
    return ProgramRun(compiled, entry, _Options(compiled.strategy, machine, None, "error"), None)


# pypto.ir sits below the runtime and cannot import it: the runtime hands it its runner instead
register_runner(_program_run_of)
