"""Argument normalisation shared by the op builder functions."""

from __future__ import annotations

from typing import Any

from pypto.dtype import DataType
from pypto.errors import PyptoTypeError, Span
from pypto.ir.expr import ConstFloat, ConstInt, Expr, MakeTuple, as_expr
from pypto.ir.types import ScalarType


def to_tuple(v: Any, span: Span | None, what: str = "list") -> MakeTuple:
    """A Python list/tuple (of ints or exprs) or a MakeTuple, as a MakeTuple of INDEX expressions."""
    if isinstance(v, MakeTuple):
        return v
    if isinstance(v, (list, tuple)):
        return MakeTuple(tuple(as_expr(x, span) for x in v), span or MakeTuple.__dataclass_fields__["span"].default)
    raise PyptoTypeError(f"expected a list for '{what}', got {type(v).__name__}", span)


def scalar_arg(v: Any, like_dtype: DataType | None, span: Span | None, promote: bool = False) -> Expr:
    """A scalar operand of a tile op; constants adopt the tile's dtype when compatible.

    With ``promote`` (the arithmetic tile-scalar ops, whose result dtype is ``prom(D(tile), D(s))``)
    a float constant keeps its own dtype: a bare float literal is FP32 (spec §2.1), so
    ``muls(fp16_tile, 0.5)`` deduces FP32 and ``pl.const(0.5, pl.FP16)`` is the way to stay in FP16.
    Integer constants still adopt the tile's dtype (an int never widens a float tile). Ops whose
    scalar only has to match the tile (compare, select, fill) always adopt.
    """
    e = as_expr(v, span, int_dtype=DataType.INT32)
    if like_dtype is not None and isinstance(e, (ConstInt, ConstFloat)) and e.dtype is not like_dtype:
        if like_dtype.is_float() and not (promote and isinstance(e, ConstFloat)):
            return ConstFloat(float(e.value), like_dtype, e.span)
        if isinstance(e, ConstInt) and (like_dtype.is_int()):
            return ConstInt(int(e.value), like_dtype, e.span)
    return e


def dtype_of(v: Any) -> DataType | None:
    t = getattr(v, "type", None)
    return getattr(t, "dtype", None)


def is_scalar(v: Any) -> bool:
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return True
    return isinstance(getattr(v, "type", None), ScalarType)
