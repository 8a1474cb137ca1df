"""IR types: frozen with structural equality (shapes hold constant or variable expressions)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from pypto.dtype import DataType
from pypto.enums import MemorySpace, TensorLayout, TileLayout, TilePad
from pypto.errors import UNKNOWN_SPAN, Span
from pypto.ir.base_types import ScalarType, TupleType
from pypto.ir.expr import ConstInt, Expr, Var, static_int


def to_shape(shape: Any) -> tuple:
    """Normalise a list of ints/exprs into a tuple of expressions (ints become INDEX constants)."""
    out = []
    for d in shape:
        if isinstance(d, bool):
            raise TypeError(f"shape entries must be integers, got {d!r}")
        out.append(ConstInt(d, DataType.INDEX) if isinstance(d, int) else d)
    return tuple(out)


@dataclass(frozen=True, slots=True, eq=False)
class MemRef:
    """A buffer: identity expresses sharing; ``addr`` is -1 until AllocateMemoryAddr."""

    memory_space: MemorySpace
    addr: int
    size: int
    id: int
    span: Span = UNKNOWN_SPAN

    @property
    def name(self) -> str:
        return f"mem_{self.memory_space.name.lower()}_{self.id}"


@dataclass(frozen=True, slots=True)
class TensorView:
    stride: tuple = ()
    layout: TensorLayout = TensorLayout.ND


@dataclass(frozen=True, slots=True)
class TileView:
    valid_shape: tuple = ()
    stride: tuple = ()
    start_offset: Any = None
    blayout: TileLayout = TileLayout.row_major
    slayout: TileLayout = TileLayout.none_box
    fractal: int = 512
    pad: TilePad = TilePad.null

    def __post_init__(self) -> None:
        object.__setattr__(self, "valid_shape", to_shape(self.valid_shape))
        object.__setattr__(self, "stride", to_shape(self.stride))


@dataclass(frozen=True, slots=True)
class TensorType:
    shape: tuple
    dtype: DataType
    memref: MemRef | None = field(default=None, compare=False)
    tensor_view: TensorView | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "shape", to_shape(self.shape))


@dataclass(frozen=True, slots=True)
class TileType:
    shape: tuple
    dtype: DataType
    memref: MemRef | None = field(default=None, compare=False)
    tile_view: TileView | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "shape", to_shape(self.shape))

    @property
    def valid_shape(self) -> tuple:
        if self.tile_view is not None and self.tile_view.valid_shape:
            return self.tile_view.valid_shape
        return self.shape

    @property
    def view(self) -> TileView:
        return self.tile_view if self.tile_view is not None else TileView(valid_shape=self.shape)


@dataclass(frozen=True, slots=True)
class UnknownType:
    pass


@dataclass(frozen=True, slots=True)
class MemRefType:
    pass


ShapedType = (TensorType, TileType)


def static_shape(t: Any) -> tuple[int, ...] | None:
    """The shape as ints if every dim is constant, else None."""
    dims = [static_int(d) for d in t.shape]
    return None if any(d is None for d in dims) else tuple(dims)


def nbytes(t: Any) -> int | None:
    shape = static_shape(t)
    if shape is None:
        return None
    n = 1
    for d in shape:
        n *= d
    return n * t.dtype.nbytes


def type_kind(t: Any) -> str:
    return {TensorType: "Tensor", TileType: "Tile", ScalarType: "Scalar", TupleType: "Tuple"}.get(
        type(t), type(t).__name__
    )


def dims_equal(a: Expr, b: Expr) -> bool:
    sa, sb = static_int(a), static_int(b)
    if sa is not None and sb is not None:
        return sa == sb
    return a is b


def shape_str(shape: tuple) -> str:
    return "[" + ", ".join(d.name if isinstance(d, Var) else str(static_int(d)) for d in shape) + "]"


def type_str(t: Any) -> str:
    if isinstance(t, ScalarType):
        return f"Scalar[{t.dtype.name}]"
    if isinstance(t, (TensorType, TileType)):
        return f"{type_kind(t)}[{shape_str(t.shape)}, {t.dtype.name}]"
    if isinstance(t, TupleType):
        return "tuple[" + ", ".join(type_str(x) for x in t.types) + "]"
    return type(t).__name__


def with_memref(t: Any, memref: MemRef | None) -> Any:
    return replace(t, memref=memref)


def span_or_unknown(span: Span | None) -> Span:
    return span if span is not None else UNKNOWN_SPAN
