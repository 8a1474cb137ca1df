"""A program compiled once and run many times on caller-owned arrays (the jit call path)."""

from __future__ import annotations

from typing import Any

import numpy as np

from pypto.errors import RuntimeFault
from pypto.ir.compiler import compile_program
from pypto.ir.stmt import Program
from pypto.ir.types import TensorType, static_int
from pypto.passes.manager import OptimizationStrategy, as_strategy
from pypto.runtime.interpreter import Interpreter
from pypto.runtime.launch import Launcher, LaunchStats
from pypto.runtime.runner import default_entry, program_result
from pyptoemu.api import attach_result
from pyptoemu.errors import FindingsError, KernelFault
from pyptoemu.result import RunResult


class CompiledJit:
    """``program`` after the pass pipeline and codegen; :meth:`execute` runs it in place."""

    def __init__(self, program: Program, strategy: Any = OptimizationStrategy.Default, machine: str = "a2a3"):
        self.source_program = program
        self.strategy = as_strategy(strategy)
        self.compiled = compile_program(program, self.strategy, with_cpp=False, target_arch=machine)
        self.program = self.compiled.program
        self.entry = default_entry(self.program)
        self.tensor_params = [p.name for p in self.entry.params if isinstance(p.type, TensorType)]
        self.last_result: RunResult | None = None

    @property
    def pto(self) -> dict[str, str]:
        return self.compiled.pto

    def execute(self, arrays: list[np.ndarray], config: Any) -> RunResult:
        """Run the entry on ``arrays`` (its parameters, in order); kernels write into them in place."""
        for p, a in zip(self.entry.params, arrays, strict=True):
            dims = [static_int(d) for d in p.type.shape]
            fits = a.ndim == len(dims) and all(d is None or d == n for d, n in zip(dims, a.shape, strict=False))
            if not fits or a.dtype != p.type.dtype.numpy:
                shown = ["?" if d is None else d for d in dims]
                raise RuntimeFault(f"argument '{p.name}' is {a.dtype}{list(a.shape)}, compiled for "
                                   f"{p.type.dtype.numpy}{shown}", self.entry.span)
        stats = LaunchStats()
        sync = "auto" if self.strategy is OptimizationStrategy.PTOAS else "asis"
        launcher = Launcher(self.compiled.pto, sync, config.machine, config.trace_path(), stats)
        named = {p.name: a for p, a in zip(self.entry.params, arrays, strict=False)}
        try:
            outputs = Interpreter(self.program, launcher).call(self.entry, list(arrays))
        except KernelFault as fault:
            faulted = not isinstance(fault, FindingsError)  # a race or double set: the launch completed
            self.last_result = program_result(self.entry, stats, config.machine, (), named, faulted)
            raise attach_result(fault, self.last_result) from None
        self.last_result = program_result(self.entry, stats, config.machine, tuple(outputs), named, False)
        return self.last_result
