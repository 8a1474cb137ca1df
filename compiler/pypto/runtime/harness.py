"""``pypto.runtime.execute_compiled`` (spec pypto-jit §10.4): run a program named by its output directory.

pypto-lib's ``golden`` harness compiles with ``fn.compile(*dummies, config=RunConfig(platform=...))``,
keeps ``compiled.output_dir`` and later calls ``execute_compiled(work_dir, args, platform=...,
device_id=...)`` with the arguments in the orchestration's parameter order: tensors, updated in place,
and scalars (Python numbers or ``ctypes`` values). A jit program is specialized on its scalar values
at compile time, so scalars here are checked against nothing and skipped; the tensors bind the
compiled program's tensor parameters in order. The device id, DFX switches, log level, AICPU thread
count and dependency analysis flag mean nothing to the emulator and are accepted.
"""

from __future__ import annotations

import ctypes
import os
from typing import Any

from pypto.errors import RuntimeFault
from pypto.runtime.compiled import registered
from pypto.runtime.config import RunConfig
from pypto.runtime.runner import _DfxOpts
from pyptoemu.result import RunResult


def _is_scalar(value: Any) -> bool:
    return isinstance(value, (bool, int, float, ctypes._SimpleCData))


def execute_compiled(work_dir: Any, args: list | tuple, *, platform: str, device_id: int = 0,
                     dfx: _DfxOpts | None = None, level: int = 2, aicpu_thread_num: int | None = None,
                     analyze_auto_scopes_for_deps: bool = False) -> RunResult:
    """Run the program compiled into ``work_dir`` on ``args``; tensor arguments are written in place.

    Returns the run's :class:`pyptoemu.RunResult` (upstream returns nothing; the extra is harmless).
    """
    compiled = registered(work_dir)
    if compiled is None:
        raise RuntimeFault(f"execute_compiled: no program was compiled into '{os.fspath(work_dir)}' in this "
                           "process (the emulator keeps compiled programs in memory: compile it first with "
                           "fn.compile(...) or pypto.ir.compile and pass its output_dir)")
    config = RunConfig(platform=platform, device_id=device_id, aicpu_thread_num=aicpu_thread_num,
                       analyze_auto_scopes_for_deps=analyze_auto_scopes_for_deps)
    tensors = [a for a in args if not _is_scalar(a)]
    if len(tensors) != len(compiled.tensor_params):
        raise TypeError(f"execute_compiled: the program takes {len(compiled.tensor_params)} tensors "
                        f"({', '.join(compiled.tensor_params)}), got {len(tensors)}")
    # the values of pl.RUNTIME scalars, by their place among the jit function's parameters (the others
    # were specialized into the program)
    values = [(name, kind, a.value if isinstance(a, ctypes._SimpleCData) else a)
              for (name, kind), a in zip(compiled.signature, args, strict=False)]
    for name, kind, value in values:  # a specialized scalar is baked into the program: it must match
        if kind == "const" and name in compiled.constants and value != compiled.constants[name]:
            raise TypeError(f"execute_compiled: '{name}' was compiled as the constant {compiled.constants[name]!r}, "
                            f"got {value!r}: compile again for that value, or give it pl.RUNTIME")
    scalars = {name: value for name, kind, value in values if kind == "runtime"}
    return compiled.call_in_place(tensors, config, scalars)
