"""Expression nodes.

Nodes are frozen and compare by identity (two variables named ``x`` never alias); constants compare by
value so that types holding constant shapes have structural equality. Python operators on
expressions build promoted scalar expressions (``i * 64``), built by the scalar helpers at the end
of this module.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pypto.dtype import DataType
from pypto.errors import UNKNOWN_SPAN, PyptoTypeError, Span
from pypto.ir.base_types import ScalarType, TupleType


class Expr:
    """Base of every expression; ``type`` is computed at construction."""

    __slots__ = ()

    def _bin(self, other: Any, name: str, reverse: bool = False) -> Expr:
        fn = _SCALAR_OPERATORS[name]
        return fn(other, self) if reverse else fn(self, other)

    def __add__(self, o):
        return self._bin(o, "add")

    def __radd__(self, o):
        return self._bin(o, "add", True)

    def __sub__(self, o):
        return self._bin(o, "sub")

    def __rsub__(self, o):
        return self._bin(o, "sub", True)

    def __mul__(self, o):
        return self._bin(o, "mul")

    def __rmul__(self, o):
        return self._bin(o, "mul", True)

    def __floordiv__(self, o):
        return self._bin(o, "floordiv")

    def __mod__(self, o):
        return self._bin(o, "mod")

    def __truediv__(self, o):
        return self._bin(o, "truediv")

    def __neg__(self):
        return neg(self)

    def __lt__(self, o):
        return self._bin(o, "lt")

    def __le__(self, o):
        return self._bin(o, "le")

    def __gt__(self, o):
        return self._bin(o, "gt")

    def __ge__(self, o):
        return self._bin(o, "ge")


@dataclass(frozen=True, slots=True, eq=False)
class Var(Expr):
    name: str
    type: Any
    span: Span = UNKNOWN_SPAN

    def __repr__(self) -> str:
        return f"Var({self.name})"


@dataclass(frozen=True, slots=True, eq=False)
class IterArg(Var):
    """A loop-carried value; accepts ``IterArg(name, type, init_value, span)`` too."""

    init_value: Expr | None = None

    def __post_init__(self) -> None:
        if isinstance(self.span, Expr):
            span, init = self.init_value, self.span
            object.__setattr__(self, "init_value", init)
            object.__setattr__(self, "span", span if isinstance(span, Span) else UNKNOWN_SPAN)


@dataclass(frozen=True, slots=True)
class ConstInt(Expr):
    value: int
    dtype: DataType = DataType.INT64
    span: Span = field(default=UNKNOWN_SPAN, compare=False)

    @property
    def type(self):

        return ScalarType(self.dtype)


@dataclass(frozen=True, slots=True)
class ConstFloat(Expr):
    value: float
    dtype: DataType = DataType.FP32
    span: Span = field(default=UNKNOWN_SPAN, compare=False)

    @property
    def type(self):

        return ScalarType(self.dtype)


@dataclass(frozen=True, slots=True)
class ConstBool(Expr):
    value: bool
    span: Span = field(default=UNKNOWN_SPAN, compare=False)
    dtype: DataType = DataType.BOOL

    @property
    def type(self):

        return ScalarType(DataType.BOOL)


@dataclass(frozen=True, slots=True, eq=False)
class Op:
    """A registered operator, referenced by name."""

    name: str


@dataclass(frozen=True, slots=True, eq=False)
class GlobalVar(Op):
    """A function of the program, used as the callee of a Call."""


@dataclass(frozen=True, slots=True, eq=False)
class Call(Expr):
    op: Op
    args: tuple
    kwargs: dict = field(default_factory=dict)
    type: Any = None
    span: Span = UNKNOWN_SPAN

    def kwarg(self, name: str, default: Any = None) -> Any:
        return self.kwargs.get(name, default)


@dataclass(frozen=True, slots=True, eq=False)
class MakeTuple(Expr):
    elements: tuple
    span: Span = UNKNOWN_SPAN

    @property
    def type(self):

        return TupleType(tuple(e.type for e in self.elements))


@dataclass(frozen=True, slots=True, eq=False)
class TupleGetItemExpr(Expr):
    tuple: Expr
    index: int
    span: Span = UNKNOWN_SPAN

    @property
    def type(self):
        return self.tuple.type.types[self.index]


@dataclass(frozen=True, slots=True, eq=False)
class BinaryExpr(Expr):
    left: Expr
    right: Expr
    dtype: DataType
    span: Span = UNKNOWN_SPAN

    @property
    def type(self):

        return ScalarType(self.dtype)


@dataclass(frozen=True, slots=True, eq=False)
class UnaryExpr(Expr):
    operand: Expr
    dtype: DataType
    span: Span = UNKNOWN_SPAN

    @property
    def type(self):

        return ScalarType(self.dtype)


def _binary(name: str) -> type:
    return dataclass(frozen=True, slots=True, eq=False)(type(name, (BinaryExpr,), {}))


def _unary(name: str) -> type:
    return dataclass(frozen=True, slots=True, eq=False)(type(name, (UnaryExpr,), {}))


Add = _binary("Add")
Sub = _binary("Sub")
Mul = _binary("Mul")
FloorDiv = _binary("FloorDiv")
FloorMod = _binary("FloorMod")
FloatDiv = _binary("FloatDiv")
Min = _binary("Min")
Max = _binary("Max")
Pow = _binary("Pow")
Eq = _binary("Eq")
Ne = _binary("Ne")
Lt = _binary("Lt")
Le = _binary("Le")
Gt = _binary("Gt")
Ge = _binary("Ge")
And = _binary("And")
Or = _binary("Or")
Xor = _binary("Xor")
BitAnd = _binary("BitAnd")
BitOr = _binary("BitOr")
BitXor = _binary("BitXor")
BitShiftLeft = _binary("BitShiftLeft")
BitShiftRight = _binary("BitShiftRight")
Abs = _unary("Abs")
Neg = _unary("Neg")
Not = _unary("Not")
BitNot = _unary("BitNot")
Cast = _unary("Cast")

COMPARISONS = (Eq, Ne, Lt, Le, Gt, Ge)


def const_value(e: Any) -> Any:
    """The Python value of a constant expression (or plain number), else None."""
    if isinstance(e, (ConstInt, ConstFloat, ConstBool)):
        return e.value
    if isinstance(e, (bool, int, float)):
        return e
    return None


def static_int(e: Any) -> int | None:
    v = const_value(e)
    return v if isinstance(v, int) and not isinstance(v, bool) else None


# ----------------------------------------------------------------------------- scalar arithmetic
# The scalar promotion rule (spec §2.1, §3.5): both operands numeric and of the same category (int
# vs float); the wider type wins and the narrower operand is wrapped in ``Cast`` (never between
# INDEX and INT64). Comparisons give BOOL.


def as_expr(v: Any, span: Span | None = None, int_dtype: DataType = DataType.INDEX) -> Expr:
    """Turn a Python number into a constant expression; expressions pass through."""
    span = span or UNKNOWN_SPAN
    if isinstance(v, Expr):
        return v
    if isinstance(v, bool):
        return ConstBool(v, span)
    if isinstance(v, int):
        return ConstInt(v, int_dtype, span)
    if isinstance(v, float):
        return ConstFloat(v, DataType.FP32, span)
    raise PyptoTypeError(f"expected a scalar expression, got {type(v).__name__}", span)


def scalar_dtype(e: Expr, span: Span | None = None) -> DataType:
    t = e.type
    if not isinstance(t, ScalarType):
        raise PyptoTypeError(f"expected a scalar operand, got {type(t).__name__}", span or _span(e))
    return t.dtype


def _span(e: Any) -> Span:
    return getattr(e, "span", None) or UNKNOWN_SPAN


def _widen(e: Expr, frm: DataType, to: DataType) -> Expr:
    if frm is to or {frm, to} == {DataType.INDEX, DataType.INT64}:
        return e
    if isinstance(e, ConstInt) and not to.is_float():
        return ConstInt(e.value, to, e.span)
    if isinstance(e, (ConstInt, ConstFloat)) and to.is_float():
        return ConstFloat(float(e.value), to, e.span)
    return Cast(e, to, _span(e))


def _unify(a: Expr, b: Expr, op: str, span: Span) -> tuple[Expr, Expr, DataType]:
    da, db = scalar_dtype(a, span), scalar_dtype(b, span)
    if DataType.BOOL in (da, db) and op not in ("eq", "ne", "and", "or"):
        raise PyptoTypeError(f"operator '{op}' does not accept BOOL operands", span)
    if da is db:
        return a, b, da
    # A Python literal adopts the other operand's type.
    lit_a = isinstance(a, (ConstInt, ConstFloat))
    lit_b = isinstance(b, (ConstInt, ConstFloat))
    if lit_a and not lit_b and (da.is_float() == db.is_float() or (db.is_float() and isinstance(a, ConstInt))):
        return _widen(a, da, db), b, db
    if lit_b and not lit_a and (da.is_float() == db.is_float() or (da.is_float() and isinstance(b, ConstInt))):
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
    def build(a: Any, b: Any, span: Span | None = None) -> Expr:
        sp = span or _span(a if isinstance(a, Expr) else b)
        a2 = as_expr(a, sp)
        b2 = as_expr(b, sp)
        x, y, dt = _unify(a2, b2, name, sp)
        if cls in COMPARISONS:
            dt = DataType.BOOL
        elif cls is FloatDiv:
            dt = dt if dt.is_float() else DataType.FP32
        return cls(x, y, dt, sp)

    build.__name__ = name
    return build


add = _make(Add, "add")
sub = _make(Sub, "sub")
mul = _make(Mul, "mul")
truediv = _make(FloatDiv, "truediv")
floordiv = _make(FloorDiv, "floordiv")
mod = _make(FloorMod, "mod")
pow = _make(Pow, "pow")
eq = _make(Eq, "eq")
ne = _make(Ne, "ne")
lt = _make(Lt, "lt")
le = _make(Le, "le")
gt = _make(Gt, "gt")
ge = _make(Ge, "ge")
min_ = _make(Min, "min")
max_ = _make(Max, "max")
bit_and = _make(BitAnd, "bit_and")
bit_or = _make(BitOr, "bit_or")
bit_xor = _make(BitXor, "bit_xor")
bit_shift_left = _make(BitShiftLeft, "bit_shift_left")
bit_shift_right = _make(BitShiftRight, "bit_shift_right")
and_ = _make(And, "and")
or_ = _make(Or, "or")


def neg(a: Any, span: Span | None = None) -> Expr:
    a = as_expr(a, span)
    return Neg(a, scalar_dtype(a, span), span or _span(a))


def bit_not(a: Any, span: Span | None = None) -> Expr:
    a = as_expr(a, span)
    return BitNot(a, scalar_dtype(a, span), span or _span(a))


def cast(a: Any, dtype: DataType, span: Span | None = None) -> Expr:
    a = as_expr(a, span)
    scalar_dtype(a, span)
    return Cast(a, dtype, span or _span(a))


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

# Expr's Python operators (``i * 64``) by the name ``Expr._bin`` passes.
_SCALAR_OPERATORS = {"add": add, "sub": sub, "mul": mul, "floordiv": floordiv, "mod": mod, "truediv": truediv,
                     "lt": lt, "le": le, "gt": gt, "ge": ge}
