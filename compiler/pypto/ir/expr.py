"""Expression nodes.

Nodes are frozen and compare by identity (two variables named ``x`` never alias); constants compare by
value so that types holding constant shapes have structural equality. Python operators on
expressions build promoted scalar expressions (``i * 64``), see :mod:`pypto.ir.scalar`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pypto.dtype import DataType
from pypto.errors import UNKNOWN_SPAN, Span


class Expr:
    """Base of every expression; ``type`` is computed at construction."""

    __slots__ = ()

    def _bin(self, other: Any, name: str, reverse: bool = False) -> Expr:
        from pypto.ir import scalar

        fn = getattr(scalar, name)
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
        from pypto.ir import scalar

        return scalar.neg(self)

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
        from pypto.ir.types import ScalarType

        return ScalarType(self.dtype)


@dataclass(frozen=True, slots=True)
class ConstFloat(Expr):
    value: float
    dtype: DataType = DataType.FP32
    span: Span = field(default=UNKNOWN_SPAN, compare=False)

    @property
    def type(self):
        from pypto.ir.types import ScalarType

        return ScalarType(self.dtype)


@dataclass(frozen=True, slots=True)
class ConstBool(Expr):
    value: bool
    span: Span = field(default=UNKNOWN_SPAN, compare=False)
    dtype: DataType = DataType.BOOL

    @property
    def type(self):
        from pypto.ir.types import ScalarType

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
        from pypto.ir.types import TupleType

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
        from pypto.ir.types import ScalarType

        return ScalarType(self.dtype)


@dataclass(frozen=True, slots=True, eq=False)
class UnaryExpr(Expr):
    operand: Expr
    dtype: DataType
    span: Span = UNKNOWN_SPAN

    @property
    def type(self):
        from pypto.ir.types import ScalarType

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
