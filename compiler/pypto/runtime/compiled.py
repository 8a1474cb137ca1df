"""A program compiled once and run many times on caller-owned arrays (the jit call path).

Its ``output_dir`` (spec pypto-jit §10.2/§10.5) is made on first use under ``$PYPTO_PROG_BUILD_DIR``
(else ``build_output`` in the working directory) as ``<program>_<timestamp>``, with each kernel's
``.pto`` text in ``kernels/``; the directory is registered so that
:func:`pypto.runtime.harness.execute_compiled` finds the program again by it (the emulator keeps the
compiled program in memory rather than reloading it from files).
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import numpy as np

from pypto.errors import RuntimeFault
from pypto.ir.compiler import compile_program
from pypto.ir.stmt import Program
from pypto.ir.types import TensorType, static_int
from pypto.passes.manager import OptimizationStrategy, as_strategy
from pypto.runtime.arrays import as_numpy, write_back
from pypto.runtime.interpreter import Interpreter
from pypto.runtime.launch import Launcher, LaunchStats
from pypto.runtime.runner import default_entry, program_result
from pyptoemu.api import attach_result
from pyptoemu.errors import FindingsError, KernelFault

# output directory (resolved) -> the program compiled into it, for execute_compiled
_BY_OUTPUT_DIR: dict[Path, CompiledJit] = {}


def _new_build_dir(name: str) -> Path:
    base = Path(os.environ.get("PYPTO_PROG_BUILD_DIR") or "build_output")
    stamp = time.strftime("%Y%m%d_%H%M%S")
    for n in range(1000):
        d = base / (f"{name}_{stamp}" if n == 0 else f"{name}_{stamp}_{n}")
        try:
            d.mkdir(parents=True)
            return d
        except FileExistsError:
            continue
    raise RuntimeFault(f"cannot make a fresh build directory for '{name}' under {base}")


def registered(work_dir: Any) -> CompiledJit | None:
    """The program whose ``output_dir`` is ``work_dir`` (compiled in this process), else None."""
    return _BY_OUTPUT_DIR.get(Path(work_dir).resolve())
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
        self.returned_outs: tuple = ()  # per value the entry returns, the Out parameter it names (or None)
        self._output_dir: Path | None = None

    @property
    def output_dir(self) -> Path:
        """This program's build directory (made, filled with its kernels and registered on first use)."""
        if self._output_dir is None:
            d = _new_build_dir(self.source_program.name)
            kernels = d / "kernels"
            kernels.mkdir()
            for name, text in self.compiled.pto.items():
                (kernels / f"{name}.pto").write_text(text)
            self._output_dir = d
            _BY_OUTPUT_DIR[d.resolve()] = self
        return self._output_dir

    def __fspath__(self) -> str:
        return os.fspath(self.output_dir)

    def __str__(self) -> str:
        return os.fspath(self.output_dir)

    def call_in_place(self, values: list, config: Any) -> RunResult:
        """Run on the caller's tensors (NumPy arrays or torch CPU tensors, one per tensor parameter in
        order): every write, including an ``Out`` parameter rebound to a new tensor, lands in them."""
        arrays = [as_numpy(v) for v in values]
        result = self.execute([a for a, _ in arrays], config)
        by_name = {name: work for name, (work, _) in zip(self.tensor_params, arrays, strict=True)}
        for name, value in zip(self.returned_outs, result.outputs, strict=False):
            # an Out parameter rebound to a new tensor (`z = pl.add(x, y)`): its final value is what
            # the caller's array must hold
            if name is not None and isinstance(value, np.ndarray) and not np.shares_memory(value, by_name[name]):
                np.copyto(by_name[name], value)
        for work, writer in arrays:
            write_back(work, writer)
        return result

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
