"""Scalar expression helpers with the scalar promotion rule (spec §2.1, §3.5).

Both operands must be numeric and of the same category (int vs float); the wider type wins and the
narrower operand is wrapped in ``Cast`` (never between INDEX and INT64). Comparisons give BOOL.
"""

from __future__ import annotations

from typing import Any

from pypto.dtype import DataType
from pypto.errors import PyptoTypeError, Span
from pypto.ir import expr as E
from pypto.ir.types import ScalarType


def as_expr(v: Any, span: Span | None = None, int_dtype: DataType = DataType.INDEX) -> E.Expr:
    """Turn a Python number into a constant expression; expressions pass through."""
    span = span or E.UNKNOWN_SPAN
    if isinstance(v, E.Expr):
        return v
    if isinstance(v, bool):
        return E.ConstBool(v, span)
    if isinstance(v, int):
        return E.ConstInt(v, int_dtype, span)
    if isinstance(v, float):
        return E.ConstFloat(v, DataType.FP32, span)
    raise PyptoTypeError(f"expected a scalar expression, got {type(v).__name__}", span)


def scalar_dtype(e: E.Expr, span: Span | None = None) -> DataType:
    t = e.type
    if not isinstance(t, ScalarType):
        raise PyptoTypeError(f"expected a scalar operand, got {type(t).__name__}", span or _span(e))
    return t.dtype


def _span(e: Any) -> Span:
    return getattr(e, "span", None) or E.UNKNOWN_SPAN


def _widen(e: E.Expr, frm: DataType, to: DataType) -> E.Expr:
    if frm is to or {frm, to} == {DataType.INDEX, DataType.INT64}:
        return e
    if isinstance(e, E.ConstInt) and not to.is_float():
        return E.ConstInt(e.value, to, e.span)
    if isinstance(e, (E.ConstInt, E.ConstFloat)) and to.is_float():
        return E.ConstFloat(float(e.value), to, e.span)
    return E.Cast(e, to, _span(e))


def _unify(a: E.Expr, b: E.Expr, op: str, span: Span) -> tuple[E.Expr, E.Expr, DataType]:
    da, db = scalar_dtype(a, span), scalar_dtype(b, span)
    if DataType.BOOL in (da, db) and op not in ("eq", "ne", "and", "or"):
        raise PyptoTypeError(f"operator '{op}' does not accept BOOL operands", span)
    if da is db:
        return a, b, da
    # A Python literal adopts the other operand's type.
    lit_a = isinstance(a, (E.ConstInt, E.ConstFloat))
    lit_b = isinstance(b, (E.ConstInt, E.ConstFloat))
    if lit_a and not lit_b and (da.is_float() == db.is_float() or (db.is_float() and isinstance(a, E.ConstInt))):
        return _widen(a, da, db), b, db
    if lit_b and not lit_a and (da.is_float() == db.is_float() or (da.is_float() and isinstance(b, E.ConstInt))):
        return a, _widen(b, db, da), da
    if da.is_float() != db.is_float():
        raise PyptoTypeError(
            f"operator '{op}' mixes {da.name} and {db.name}; cast one side with pl.cast", span
        )
    if {da, db} == {DataType.INDEX, DataType.INT64}:
        return a, b, da
    wide = da if da.bits >= db.bits else db
    return _widen(a, da, wide), _widen(b, db, wide), wide


def _make(cls: type, name: str):
    def build(a: Any, b: Any, span: Span | None = None) -> E.Expr:
        sp = span or _span(a if isinstance(a, E.Expr) else b)
        a2 = as_expr(a, sp)
        b2 = as_expr(b, sp)
        x, y, dt = _unify(a2, b2, name, sp)
        if cls in E.COMPARISONS:
            dt = DataType.BOOL
        elif cls is E.FloatDiv:
            dt = dt if dt.is_float() else DataType.FP32
        return cls(x, y, dt, sp)

    build.__name__ = name
    return build


add = _make(E.Add, "add")
sub = _make(E.Sub, "sub")
mul = _make(E.Mul, "mul")
truediv = _make(E.FloatDiv, "truediv")
floordiv = _make(E.FloorDiv, "floordiv")
mod = _make(E.FloorMod, "mod")
pow = _make(E.Pow, "pow")
eq = _make(E.Eq, "eq")
ne = _make(E.Ne, "ne")
lt = _make(E.Lt, "lt")
le = _make(E.Le, "le")
gt = _make(E.Gt, "gt")
ge = _make(E.Ge, "ge")
min_ = _make(E.Min, "min")
max_ = _make(E.Max, "max")
bit_and = _make(E.BitAnd, "bit_and")
bit_or = _make(E.BitOr, "bit_or")
bit_xor = _make(E.BitXor, "bit_xor")
bit_shift_left = _make(E.BitShiftLeft, "bit_shift_left")
bit_shift_right = _make(E.BitShiftRight, "bit_shift_right")
and_ = _make(E.And, "and")
or_ = _make(E.Or, "or")


def neg(a: Any, span: Span | None = None) -> E.Expr:
    a = as_expr(a, span)
    return E.Neg(a, scalar_dtype(a, span), span or _span(a))


def bit_not(a: Any, span: Span | None = None) -> E.Expr:
    a = as_expr(a, span)
    return E.BitNot(a, scalar_dtype(a, span), span or _span(a))


def cast(a: Any, dtype: DataType, span: Span | None = None) -> E.Expr:
    a = as_expr(a, span)
    scalar_dtype(a, span)
    return E.Cast(a, dtype, span or _span(a))


# Python operator class name -> builder; used by the DSL parser.
BINARY_BUILDERS = {
    "Add": add,
    "Sub": sub,
    "Mult": mul,
    "Div": truediv,
    "FloorDiv": floordiv,
    "Mod": mod,
    "Eq": eq,
    "NotEq": ne,
    "Lt": lt,
    "LtE": le,
    "Gt": gt,
    "GtE": ge,
    "BitAnd": bit_and,
    "BitOr": bit_or,
    "BitXor": bit_xor,
    "LShift": bit_shift_left,
    "RShift": bit_shift_right,
}
