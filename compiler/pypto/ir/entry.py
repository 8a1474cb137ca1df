"""Which function of a program a run starts at, and which of its parameters are pure outputs.

Both the compiler's :class:`pypto.ir.compiler.CompiledProgram` (its ``param_names`` and
``output_indices``, spec pypto-jit §10.2) and the runtime (:mod:`pypto.runtime.runner`, which binds
arguments by them) need these facts; they live here, below both, so that neither computes its own.
"""

from __future__ import annotations

from pypto.enums import FunctionType, ParamDirection
from pypto.errors import RuntimeFault
from pypto.ir.stmt import Function, Program
from pypto.ir.types import TensorType


def default_entry(program: Program) -> Function:
    """The program's one Orchestration function, else its only function; several candidates is an error."""
    orch = [f for f in program.functions_list if f.type is FunctionType.Orchestration]
    if len(orch) == 1:
        return orch[0]
    if len(program.functions_list) == 1:
        return program.functions_list[0]
    raise RuntimeFault(f"program '{program.name}' has several candidate entries; pass entry=...")


def pure_out_indices(func: Function) -> list[int]:
    """Positions of the tensor parameters declared ``pl.Out`` (not ``InOut``): the return-style call
    allocates these as zeros and returns them."""
    return [i for i, p in enumerate(func.params)
            if func.param_directions[i] is ParamDirection.Out and isinstance(p.type, TensorType)]
