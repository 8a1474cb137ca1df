"""``ir.compile``: run a strategy's passes, then write .pto, C++ and pass dumps (spec §6.1)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

from pypto.backend import BackendType, backend_of_platform
from pypto.codegen.common import core_kind, kernels
from pypto.codegen.cpp import CppCodegen
from pypto.codegen.orchestration import generate_orchestration, kernel_config
from pypto.codegen.pto import PTOCodegen
from pypto.codegen.tile_ir import generate_tile_ir
from pypto.enums import CAPACITY, FunctionType
from pypto.errors import CompileError
from pypto.ir.entry import default_entry, pure_out_indices
from pypto.ir.stmt import Function, Program
from pypto.ops import isa
from pypto.passes.allocate_memory_addr import memory_report
from pypto.passes.manager import OptimizationStrategy, PassManager, as_strategy

EMIT_FORMS = ("pto", "tile-ir")

# (compiled module, entry function, machine name) -> a callable that runs the entry (spec pypto-jit
# §10.2 call styles). pypto.runtime, which imports this layer, registers it when it is imported.
Runner = Callable[["CompiledModule", Function, str], Callable[..., Any]]
_runner: Runner | None = None


def register_runner(runner: Runner) -> None:
    """Let a ``CompiledProgram`` run: called once by :mod:`pypto.runtime.runner` at import."""
    global _runner
    _runner = runner


@dataclass
class CompiledModule:
    """The transformed program plus one .pto and one C++ text per kernel."""

    program: Program
    strategy: OptimizationStrategy
    pto: dict[str, str] = field(default_factory=dict)
    cpp: dict[str, str] = field(default_factory=dict)
    core: dict[str, str] = field(default_factory=dict)


def compile_program(program: Program, strategy: Any = OptimizationStrategy.Default, dump_dir: str | None = None,
                    with_cpp: bool = True, target_arch: str = "a2a3") -> CompiledModule:
    """Run the strategy's passes and generate each kernel's .pto (its ``pto.target_arch`` is
    ``target_arch``: the emulator runs a module on that arch's machine) and C++."""
    strat = as_strategy(strategy)
    with isa.targeting(target_arch):  # the arch's instructions: a5 divides INT32 tiles natively
        out = PassManager.get_strategy(strat).run_passes(program, dump_ir=dump_dir is not None, output_dir=dump_dir)
        result = CompiledModule(out, strat, PTOCodegen(target_arch).generate(out))
        if with_cpp:
            result.cpp = CppCodegen().generate(out)
    result.core = {f.name: {"cube": "aic", "group": "group"}.get(core_kind(f), "aiv") for f in kernels(out)}
    return result


def compile(
    program: Program,
    output_dir: str | None = None,
    strategy: Any = OptimizationStrategy.Default,
    dump_passes: bool = True,
    backend_type: Any = BackendType.PTO,
    skip_ptoas: bool = True,
    verification_level: Any = None,
    emit: str = "pto",
    platform: str | None = None,
) -> CompiledProgram:
    """Compile ``program`` into ``output_dir`` and return a :class:`CompiledProgram`, which is also the
    directory as a ``str`` (the seed's return value, pypto-language §6.1).

    Writes ``kernels/<aiv|aic>/<f>.pto`` and ``.cpp`` per kernel, ``orchestration/<f>.cpp`` per
    Orchestration function, ``kernel_config.py``, ``passes_dump/NN_after_<Pass>.py`` when
    ``dump_passes``, and ``report/memory_after_AllocateMemoryAddr.txt``. ``emit="tile-ir"`` writes
    each kernel's ``.pto`` in the tile-level SSA form of seed 002 instead of level 2 (the emulator
    runs either; ``pyptoemu lower`` turns the former into the latter). ``platform`` (``a2a3``,
    ``a2a3sim``, ``a5``, ``a5sim``) picks the machine the kernels target and the result runs on;
    ``None`` is A2/A3.
    """
    machine = "a2a3" if platform is None else _machine_of(platform)
    if emit not in EMIT_FORMS:
        raise CompileError(f"emit must be one of {', '.join(EMIT_FORMS)}, not {emit!r}")
    if output_dir is None:
        output_dir = os.path.join("build_output", f"{program.name}_{time.strftime('%Y%m%d_%H%M%S')}")
    os.makedirs(output_dir, exist_ok=True)
    compiled = compile_program(program, strategy, output_dir if dump_passes else None, target_arch=machine)
    kernels_text = compiled.pto
    if emit == "tile-ir":
        kernels_text = generate_tile_ir(compiled.pto)
    for name, text in kernels_text.items():
        d = os.path.join(output_dir, "kernels", compiled.core[name])
        os.makedirs(d, exist_ok=True)
        _write(os.path.join(d, f"{name}.pto"), text)
        _write(os.path.join(d, f"{name}.cpp"), compiled.cpp[name])
    _write_orchestration(compiled, output_dir)
    _write_report(compiled, output_dir)
    result = CompiledProgram(output_dir, program, compiled, backend_type, platform)
    _BY_OUTPUT_DIR[os.path.realpath(output_dir)] = result
    return result


def _machine_of(platform: str) -> str:
    """The emulator's machine model (and kernels' target arch) of a platform name (spec §10.5)."""
    try:
        backend = backend_of_platform(platform)
    except KeyError:
        raise ValueError(f"platform must be one of a2a3, a2a3sim, a5, a5sim, got {platform!r}") from None
    return "a5" if backend is BackendType.Ascend950 else "a2a3"


class CompiledProgram(str):
    """What ``ir.compile`` returns (spec pypto-jit §10.2, §10.5): the output directory, as a ``str``.

    The seed surface (pypto-language §6.1) returns the directory as a ``str`` and the jit-era spec a
    ``CompiledProgram`` whose ``str(c)`` and ``os.fspath(c)`` are that directory; a ``str`` that
    carries the compiled program is both, so every existing caller (``os.path.join(out, ...)``,
    ``os.walk(out)``) keeps working. Calling it runs its entry on the emulator in either call style of
    §10.2 through the runner :mod:`pypto.runtime` registers (this layer does not import the runtime);
    ``compiled[name]`` is the same program entered at the orchestration ``name``."""

    output_dir: Path
    program: Program
    backend_type: Any
    platform: str | None

    def __new__(cls, output_dir: str, program: Program, compiled: CompiledModule, backend_type: Any,
                platform: str | None = None, entry: str | None = None) -> Self:
        self = super().__new__(cls, os.fspath(output_dir))
        self.output_dir = Path(output_dir)
        self.program = program  # as handed to compile (before the passes)
        self.compiled = compiled
        self.backend_type = backend_type
        self.platform = platform
        self._entry_name = entry
        self._run: Any = None  # the registered runner's object, made on the first call
        return self

    @property
    def entry(self) -> Function:
        """The function a call runs: the one orchestration (or only function), or the one named by ``[name]``."""
        transformed = self.compiled.program
        if self._entry_name is None:
            return default_entry(transformed)
        return transformed.get_function(self._entry_name)

    @property
    def param_names(self) -> list[str]:
        return [p.name for p in self.entry.params]

    @property
    def output_indices(self) -> list[int]:
        """Positions of the pure ``Out`` parameters (those the return style allocates and returns)."""
        return pure_out_indices(self.entry)

    @property
    def has_return(self) -> bool:
        return bool(self.entry.return_types)

    def __getitem__(self, key: Any) -> Any:
        """``compiled[name]``: this program entered at orchestration ``name``; other keys index the ``str``."""
        if not isinstance(key, str):
            return super().__getitem__(key)
        if key not in self.orchestration_names:
            raise KeyError(f"program '{self.program.name}' has no orchestration function '{key}' "
                           f"(it has: {', '.join(self.orchestration_names) or 'none'})")
        return CompiledProgram(self.output_dir, self.program, self.compiled, self.backend_type, self.platform, key)

    def __call__(self, *args: Any, config: Any = None) -> Any:
        """Run the entry: every parameter (in place, returns ``None``) or, when the entry returns
        values, only the parameters that are not pure ``Out`` (those are allocated as zeros and
        returned). ``config`` (a ``RunConfig``) may pick another machine for this call."""
        entry = self.entry
        full = len(entry.params)
        short = full - len(self.output_indices)
        accepted = [full] + ([short] if self.has_return and short != full else [])
        if len(args) not in accepted:
            counts = f"{full} arguments (in-place style)"
            if len(accepted) > 1:
                counts += f" or {short} (return style: without its pure Out parameters)"
            raise TypeError(f"{entry.name}() takes {counts}, got {len(args)}")
        if self._run is None:
            if _runner is None:
                raise CompileError("running a CompiledProgram needs the emulator's runtime: import pypto.runtime")
            self._run = _runner(self.compiled, entry, "a2a3" if self.platform is None else _machine_of(self.platform))
        return self._run(*args, config=config)

    @property
    def transformed(self) -> Program:
        """The program after the strategy's passes."""
        return self.compiled.program

    @property
    def pto(self) -> dict[str, str]:
        """Each kernel's ``.pto`` text, by kernel name."""
        return self.compiled.pto

    @property
    def orchestration_names(self) -> list[str]:
        return [f.name for f in self.program.functions_list if f.func_type is FunctionType.Orchestration]

    @classmethod
    def from_dir(cls, path: Any) -> CompiledProgram:
        """The program ``ir.compile`` wrote into ``path`` in this process (the emulator keeps it in
        memory rather than reloading it from the files)."""
        found = _BY_OUTPUT_DIR.get(os.path.realpath(os.fspath(path)))
        if found is None:
            raise CompileError(f"{os.fspath(path)} is not the output directory of an ir.compile in this process")
        return found


# output directory (real path) -> what ir.compile wrote there, for CompiledProgram.from_dir
_BY_OUTPUT_DIR: dict[str, CompiledProgram] = {}


def _write_orchestration(compiled: CompiledModule, output_dir: str) -> None:
    """Write ``orchestration/<f>.cpp`` per Orchestration function and ``kernel_config.py`` (spec §6.7)."""
    sources = generate_orchestration(compiled.program, compiled.core)
    if sources:
        d = os.path.join(output_dir, "orchestration")
        os.makedirs(d, exist_ok=True)
        for name, text in sources.items():
            _write(os.path.join(d, f"{name}.cpp"), text)
    _write(os.path.join(output_dir, "kernel_config.py"), kernel_config(compiled.program, compiled.core, list(sources)))


def _write_report(compiled: CompiledModule, output_dir: str) -> None:
    lines = []
    for f in kernels(compiled.program):
        for space, used in sorted(memory_report(f).items()):
            lines.append(f"{f.name} {space.name}: {used} / {CAPACITY[space]} bytes")
    d = os.path.join(output_dir, "report")
    os.makedirs(d, exist_ok=True)
    _write(os.path.join(d, "memory_after_AllocateMemoryAddr.txt"), "\n".join(lines) + "\n")


def _write(path: str, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)
