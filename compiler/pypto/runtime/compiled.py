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
from pypto.runtime.config import RunConfig
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

    def __init__(self, program: Program, strategy: Any = OptimizationStrategy.Default, machine: str = "a2a3",
                 entry: str | None = None):
        """``entry``: the function a call runs (a @pl.jit function's own name: the program may hold
        other Orchestration functions, such as a @pl.jit.opaque helper's), else the program's one
        candidate."""
        self.source_program = program
        self.strategy = as_strategy(strategy)
        self.compiled = compile_program(program, self.strategy, with_cpp=False, target_arch=machine)
        self.program = self.compiled.program
        named = [f for f in self.program.functions_list if f.name == entry]
        self.entry = named[0] if named else default_entry(self.program)
        self.tensor_params = [p.name for p in self.entry.params if isinstance(p.type, TensorType)]
        # the entry's scalar parameters: a jit function's pl.RUNTIME scalars (others are specialized away)
        self.scalar_params = [p.name for p in self.entry.params if not isinstance(p.type, TensorType)]
        self.signature: tuple = ()  # (name, "tensor" | "const" | "runtime") per jit parameter, in order
        self.constants: dict = {}  # the specialized scalar parameters' values
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

    @property
    def param_names(self) -> list[str]:
        """The jit function's parameters, in order (spec pypto-jit §10.2)."""
        return [name for name, _ in self.signature] or [p.name for p in self.entry.params]

    def __call__(self, *args: Any, config: Any = None) -> None:
        """In-place style (spec pypto-jit §10.2): every parameter of the jit function in order; tensors
        are written in place, pl.RUNTIME scalars take the values given, and a specialized scalar must be
        the value the program was compiled for. Returns None."""
        from_config = config if config is not None else RunConfig()
        names = self.param_names
        if len(args) != len(names):
            raise TypeError(f"the compiled program takes {len(names)} arguments ({', '.join(names)}), got {len(args)}")
        kinds = dict(self.signature) or {n: "tensor" for n in self.tensor_params}
        tensors, scalars = [], {}
        for name, value in zip(names, args, strict=True):
            kind = kinds.get(name, "tensor")
            if kind == "tensor":
                tensors.append(value)
            elif kind == "runtime":
                scalars[name] = value
            elif value != self.constants.get(name, value):
                raise TypeError(f"'{name}' was compiled as the constant {self.constants[name]!r}, got {value!r}: "
                                "compile again for that value, or give it pl.RUNTIME")
        self.call_in_place(tensors, from_config, scalars)

    def call_in_place(self, values: list, config: Any, scalars: dict | None = None) -> RunResult:
        """Run on the caller's tensors (NumPy arrays or torch CPU tensors, one per tensor parameter in
        order) and the values of the run-time scalar parameters (``scalars``, by name): every write,
        including an ``Out`` parameter rebound to a new tensor, lands in the tensors."""
        arrays = [as_numpy(v) for v in values]
        missing = [n for n in self.scalar_params if n not in (scalars or {})]
        if missing:
            raise TypeError(f"the program takes the run-time scalar(s) {', '.join(missing)}: pass a value for each")
        works = iter(a for a, _ in arrays)
        args = [(scalars or {})[p.name] if p.name in self.scalar_params else next(works) for p in self.entry.params]
        result = self.execute(args, config)
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
        """Run the entry on ``arrays`` (its parameters, in order: arrays, and numbers for its scalar
        parameters); kernels write into the arrays in place."""
        for p, a in zip(self.entry.params, arrays, strict=True):
            if not isinstance(p.type, TensorType):
                continue
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
