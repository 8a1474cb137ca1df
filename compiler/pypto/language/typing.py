"""Annotation objects of the DSL: ``pl.Tensor[...]``, ``pl.Tile[...]``, ``pl.Scalar[...]``, ``pl.Out``.

They are evaluated (never executed as code) when the parser reads a signature; each turns into an IR
type through :func:`to_ir_type`.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

from pypto.dtype import DataType
from pypto.enums import MemorySpace, ParamDirection, TensorLayout
from pypto.errors import PyptoTypeError, Span
from pypto.ir.types import MemRef, ScalarType, TensorType, TensorView, TileType


class AnnotationError(PyptoTypeError, TypeError):
    """A malformed annotation or ``pl.dynamic`` call.

    These run as plain Python (at class-body time, before the parser sees the function), so the error
    carries the span of the user's line, found from the calling frame; it is also a ``TypeError`` so
    code that evaluates annotations itself can catch it and re-report it at the annotation node.
    """


def _user_span() -> Span | None:
    """The span of the innermost frame outside this module (the user's annotation or call)."""
    f = sys._getframe(1)
    while f is not None and f.f_code.co_filename in (__file__, "<string>"):  # "<string>": dataclass __init__
        f = f.f_back
    return Span(f.f_code.co_filename, f.f_lineno, 1) if f is not None else None


def describe(value: Any) -> str:
    """A user-level spelling of an annotation value (never an internal repr)."""
    if isinstance(value, DataType):
        return f"pl.{value.name}"
    if isinstance(value, (TensorLayout, MemorySpace)):
        return f"pl.{value.name}"
    if isinstance(value, ScalarAnnotation):
        return f"pl.Scalar[pl.{value.dtype.name}]"
    if isinstance(value, ShapedAnnotation):
        return f"pl.{value.kind}[..., pl.{value.dtype.name}]"
    if isinstance(value, DirectionAnnotation):
        return f"pl.{value.direction.name}[{describe(value.inner)}]"
    if getattr(value, "__origin__", None) is not None:
        args = ", ".join(describe(a) for a in getattr(value, "__args__", ()))
        return f"{getattr(value.__origin__, '__name__', 'generic')}[{args}]"
    if isinstance(value, (int, float, str)):
        return repr(value)
    return type(value).__name__


@dataclass(frozen=True)
class DynVar:
    """A named dynamic dimension (``pl.dynamic("M")``)."""

    name: str

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.isidentifier():
            raise AnnotationError(
                f"pl.dynamic: the dim name must be an identifier, got {describe(self.name)}", _user_span()
            )


def dynamic(name: str) -> DynVar:
    return DynVar(name)


@dataclass(frozen=True)
class MemRefSpec:
    memory_space: MemorySpace
    addr: int
    size: int
    id: int


def MemRef_(memory_space: MemorySpace, addr: int, size: int, id: int) -> MemRefSpec:
    return MemRefSpec(memory_space, addr, size, id)


@dataclass(frozen=True)
class ShapedAnnotation:
    kind: str  # "Tensor" | "Tile"
    shape: tuple
    dtype: DataType
    layout: TensorLayout | None = None
    memref: MemRefSpec | None = None


@dataclass(frozen=True)
class ScalarAnnotation:
    dtype: DataType


@dataclass(frozen=True)
class DirectionAnnotation:
    direction: ParamDirection
    inner: Any


def _shaped(kind: str, item: Any) -> ShapedAnnotation:
    if not isinstance(item, tuple) or len(item) < 2:
        raise AnnotationError(f"pl.{kind}[shape, dtype] expects a shape and a dtype", _user_span())
    shape, dtype, *rest = item
    if isinstance(shape, (int, DynVar)):
        shape = [shape]
    if not isinstance(shape, (list, tuple)):
        raise AnnotationError(f"pl.{kind}: shape must be a list, got {describe(shape)}", _user_span())
    if not isinstance(dtype, DataType):
        raise AnnotationError(f"pl.{kind}: dtype must be a pl dtype such as pl.FP32, got {describe(dtype)}",
                              _user_span())
    layout, memref = None, None
    for r in rest:
        if isinstance(r, MemRefSpec):
            memref = r
        elif isinstance(r, TensorLayout):
            layout = r
        else:
            raise AnnotationError(
                f"pl.{kind}: unexpected annotation argument {describe(r)} (after the shape and dtype only a "
                "layout such as pl.ND/pl.DN or a memref may follow)",
                _user_span(),
            )
    return ShapedAnnotation(kind, tuple(shape), dtype, layout, memref)


class _ShapedMeta(type):
    def __getitem__(cls, item: Any) -> ShapedAnnotation:
        return _shaped(cls.__name__, item)


class Tensor(metaclass=_ShapedMeta):
    """``pl.Tensor[[d0, d1], dtype]``: a DDR tensor. ``pl.Tensor((d0, d1), dtype)`` also works."""

    def __new__(cls, shape: Any, dtype: DataType, *rest: Any) -> ShapedAnnotation:  # type: ignore[misc]
        return _shaped("Tensor", (shape, dtype, *rest))


class Tile(metaclass=_ShapedMeta):
    """``pl.Tile[[r, c], dtype]``: an on-chip tile."""

    def __new__(cls, shape: Any, dtype: DataType, *rest: Any) -> ShapedAnnotation:  # type: ignore[misc]
        return _shaped("Tile", (shape, dtype, *rest))


class _ScalarMeta(type):
    def __getitem__(cls, dtype: Any) -> ScalarAnnotation:
        if not isinstance(dtype, DataType):
            raise AnnotationError(f"pl.Scalar[dtype] expects a dtype, got {describe(dtype)}", _user_span())
        return ScalarAnnotation(dtype)


class Scalar(metaclass=_ScalarMeta):
    """``pl.Scalar[dtype]``."""

    def __new__(cls, dtype: DataType) -> ScalarAnnotation:  # type: ignore[misc]
        return ScalarAnnotation(dtype)


class _DirMeta(type):
    def __getitem__(cls, inner: Any) -> DirectionAnnotation:
        return DirectionAnnotation(cls._direction, inner)


class Out(metaclass=_DirMeta):
    """``pl.Out[T]``: a write-only output parameter."""

    _direction = ParamDirection.Out


class InOut(metaclass=_DirMeta):
    """``pl.InOut[T]``: a read-write parameter."""

    _direction = ParamDirection.InOut


def to_ir_type(ann: Any, dyn_vars: dict, make_dyn: Any) -> Any:
    """IR type of an evaluated annotation; ``make_dyn(name)`` creates the Var of a dynamic dim."""
    if isinstance(ann, DataType):
        return ScalarType(ann)
    if isinstance(ann, ScalarAnnotation):
        return ScalarType(ann.dtype)
    if isinstance(ann, ShapedAnnotation):
        dims = []
        for d in ann.shape:
            if isinstance(d, DynVar):
                if d.name not in dyn_vars:
                    dyn_vars[d.name] = make_dyn(d.name)
                dims.append(dyn_vars[d.name])
            elif isinstance(d, int) and not isinstance(d, bool) or hasattr(d, "type"):
                dims.append(d)
            else:
                raise TypeError(f"shape entries must be ints or pl.dynamic(...), got {describe(d)}")
        memref = None
        if ann.memref is not None:
            m = ann.memref
            memref = MemRef(m.memory_space, m.addr, m.size, m.id)
        if ann.kind == "Tensor":
            view = TensorView((), ann.layout) if ann.layout is not None else None
            return TensorType(tuple(dims), ann.dtype, memref, view)
        return TileType(tuple(dims), ann.dtype, memref)
    raise TypeError(f"{describe(ann)} is not a supported type annotation (use pl.Tensor, pl.Tile or pl.Scalar)")
