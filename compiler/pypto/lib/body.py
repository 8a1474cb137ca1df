"""Per-block tile bodies: the block ops a primitive runs on one block, with valid shapes set.

``Body(em, win)`` wraps the block builders of :mod:`pypto.ops.block`: every result is bound with the
block's valid shape (``[vr, vc]`` for a full tile, ``[vr, 1]`` for a row vector, ``[1, vc]`` for a
column vector), since the tile ops reset it to the full tile shape. The primitives' tile functions
(:mod:`pypto.lib.elementwise`) take a ``Body`` and tiles, so a composite calls the same functions in
its own loop body: each primitive is defined once.

Dtypes: a body computes in the operands' dtype where the ISA allows every instruction it uses
(``pypto.ops.isa.legal_dtypes``) and in FP32 otherwise (bf16 has no exp/max/div on A2/A3), casting
on the way in and out.
"""

from __future__ import annotations

from typing import Any

from pypto.dtype import DataType
from pypto.enums import MemorySpace
from pypto.errors import CompileError
from pypto.ir import expr as E
from pypto.ir.expr import static_int
from pypto.lib.broadcast import lower_binary
from pypto.lib.emit import Emitter, Window
from pypto.ops import block as B
from pypto.ops import isa


def legal(ops: tuple[str, ...], dtype: DataType) -> bool:
    return all(dtype in (isa.legal_dtypes("block." + o) or ()) for o in ops)


def work_dtype(dtype: DataType, ops: tuple[str, ...], span: Any = None) -> DataType:
    """``dtype`` if every op runs on it on the target, else FP32 - where FP32 holds every value of
    ``dtype`` exactly (floats, integers of at most 24 bits). A wider integer (INT32, INT64, UINT32)
    computed in FP32 would come back rounded past 2**24: that is a compile error, not a result."""
    if legal(ops, dtype):
        return dtype
    if dtype.is_int() and dtype.bits > FP32_EXACT_BITS:
        missing = next(o for o in ops if dtype not in (isa.legal_dtypes("block." + o) or ()))
        raise CompileError(f"{missing} on {dtype.name} tiles is not an instruction of the target, and computing it "
                           f"in FP32 would round {dtype.name} values past 2**{FP32_EXACT_BITS}", span)
    return DataType.FP32


FP32_EXACT_BITS = 24  # FP32 has a 24-bit significand: every integer of magnitude <= 2**24 is exact


class Body:
    def __init__(self, em: Emitter, win: Window):
        self.em = em
        self.win = win

    def valid_for(self, shape: tuple) -> tuple:
        dims = [static_int(d) for d in shape]
        w = self.win
        if len(dims) == 1:
            return (1,) if dims[0] == 1 else (w.vc,)
        if dims[1] == 1 and w.tc != 1:
            return (1, 1) if dims[0] == 1 else (w.vr, 1)
        if dims[0] == 1 and w.tr != 1:
            return (1, w.vc)
        return (w.vr, w.vc)

    def bind(self, base: str, call: E.Call) -> E.Var:
        return self.em.let(base, call, self.valid_for(call.type.shape))

    def op(self, name: str, *args: Any, **kw: Any) -> E.Var:
        return self.bind(name.rstrip("_"), getattr(B, name)(*args, span=self.em.span, **kw))

    def const(self, value: float, like: E.Var) -> E.Expr:
        dtype = like.type.dtype
        return E.ConstFloat(float(value), dtype) if dtype.is_float() else E.ConstInt(int(value), dtype)

    def scalar(self, name: str, t: E.Var, value: Any) -> E.Var:
        """``block.<name>s(t, value)`` with a constant in ``t``'s dtype (or a scalar expression)."""
        if isinstance(value, (int, float)):
            s = self.const(value, t)
        elif isinstance(value, (E.ConstFloat, E.ConstInt)):
            s = self.const(value.value, t)
        elif value.type.dtype is not t.type.dtype:
            s = E.cast(value, t.type.dtype, self.em.span)
        else:
            s = value
        return self.op(name, t, s)

    def cast(self, t: E.Var, dtype: DataType) -> E.Var:
        if t.type.dtype is dtype:
            return t
        return self.op("cast", t, dtype)

    def binary(self, name: str, a: E.Var, b: E.Var, kinds: tuple[str, str]) -> E.Var:
        """``block.<name>(a, b)`` with NumPy broadcasting of row/column vectors and [1, 1] tiles."""
        if kinds[0] == kinds[1]:
            return self.op(name, a, b)
        w = self.win
        full = [w.tc] if w.rank1 else [w.tr, w.tc]
        if w.rank1:
            full = [1, w.tc]
        call = lower_binary(name, a, b, kinds, full, self.bind, self.em.span)
        r = self.bind(name, call)
        if w.rank1 and len(r.type.shape) == 2:
            r = self.op("reshape", r, [w.tc])
        return r

    def scratch(self, like: E.Var) -> E.Var:
        return self.em.let("tmp", B.create_tile([static_int(d) for d in like.type.shape], like.type.dtype,
                                                MemorySpace.Vec, span=self.em.span))

    def row_reduce(self, reduce: str, t: E.Var) -> E.Var:
        """``[tr, 1]``: ``reduce`` (sum/max/min) over each valid row of ``t``."""
        return self.op("row_" + reduce, t, self.scratch(t))

    def col_reduce(self, reduce: str, t: E.Var) -> E.Var:
        """``[1, tc]``: ``reduce`` down each valid column of ``t``."""
        return self.op(reduce, t, axis=0, keepdim=True)
