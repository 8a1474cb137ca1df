"""Facts shared by both code generators (read-only over the IR)."""

from __future__ import annotations

from typing import Any

from pypto.dtype import DataType
from pypto.enums import CUBE_SPACES, FunctionType, MemorySpace
from pypto.errors import CompileError
from pypto.ir import expr as E
from pypto.ir import stmt as St
from pypto.ir.expr import static_int
from pypto.ir.types import TensorType, TileType
from pypto.ops.fifo import is_group_kernel
from pypto.passes.analysis import defined_vars, memref_of


def kernels(program: St.Program) -> list[St.Function]:
    return [f for f in program.functions_list if f.type is not FunctionType.Orchestration]


def core_kind(func: St.Function) -> str:
    """'cube' if the kernel uses Mat/Left/Right/Acc tiles, else 'vector'; a mix is an error, except in
    a group kernel ('group': a cube section and a vector section handing tiles over through FIFOs)."""
    if is_group_kernel(func):
        return "group"
    spaces = {m.memory_space for v in defined_vars(func) if (m := memref_of(v)) is not None}
    cube = spaces & CUBE_SPACES
    if cube and MemorySpace.Vec in spaces:
        raise CompileError(
            f"kernel '{func.name}' mixes vector (Vec) and cube ({', '.join(s.name for s in cube)}) tiles", func.span
        )
    return "cube" if cube else "vector"


def tile_dims(t: TileType) -> tuple[int, int]:
    shape = [static_int(d) for d in t.shape]
    if any(d is None for d in shape):
        raise CompileError("tiles need static shapes for code generation")
    if len(shape) == 1:
        return 1, shape[0]
    rows = 1
    for d in shape[:-1]:
        rows *= d
    return rows, shape[-1]


def valid_dims(t: TileType) -> tuple[Any, Any]:
    vs = list(t.valid_shape)
    if len(vs) == 1:
        return 1, static_int(vs[0])
    rows = 1
    for d in vs[:-1]:
        v = static_int(d)
        rows = None if v is None or rows is None else rows * v
    return rows, static_int(vs[-1])


def scalar_mlir(dtype: DataType) -> str:
    return dtype.mlir


def tensor_params(func: St.Function) -> list:
    return [p for p in func.params if isinstance(p.type, TensorType)]


def checked_int_constant(e: E.ConstInt) -> int:
    """The value of an integer constant of the generated code, when its type holds it. Python's
    integers are unbounded, so a constant the program folded (``-2**31 // -1`` is ``2**31``) or
    wrote may not fit the element type it meets: NumPy 2 refuses such a Python int for that dtype
    (OverflowError), and writing its bits would give another number. Refused at its line."""
    v = int(e.value)
    if e.dtype.is_int():
        lo, hi = e.dtype.int_range()
        if not lo <= v <= hi:
            raise CompileError(f"the constant {v} does not fit {e.dtype.name} ({lo}..{hi}); Python computes it "
                               f"with unbounded integers, the kernel could only wrap it to another number",
                               e.span)
    return v
