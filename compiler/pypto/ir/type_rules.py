"""Shared helpers for type deduction: broadcasting, argument checks, default tile views."""

from __future__ import annotations

from typing import Any

from pypto.dtype import DataType, promote
from pypto.enums import MemorySpace, TileLayout
from pypto.errors import PyptoTypeError, Span
from pypto.ir.expr import ConstInt, Expr, MakeTuple, static_int
from pypto.ir.types import (
    ScalarType,
    TensorType,
    TileType,
    TileView,
    dims_equal,
    shape_str,
    type_kind,
    type_str,
)


def broadcast_shapes(a: tuple, b: tuple, what: str, span: Span) -> tuple:
    """NumPy right-aligned broadcasting; symbolic dims compare by identity."""
    out = []
    for i in range(max(len(a), len(b))):
        da = a[len(a) - 1 - i] if i < len(a) else None
        db = b[len(b) - 1 - i] if i < len(b) else None
        if da is None:
            out.append(db)
        elif db is None or dims_equal(da, db):
            out.append(da)
        elif static_int(da) == 1:
            out.append(db)
        elif static_int(db) == 1:
            out.append(da)
        else:
            raise PyptoTypeError(
                f"{what}: shapes {shape_str(a)} and {shape_str(b)} cannot be broadcast "
                f"(dims {shape_str((da,))[1:-1]} and {shape_str((db,))[1:-1]} differ)",
                span,
            )
    return tuple(reversed(out))


# Binary tile ops whose broadcasts the compiler lowers to the expand ops (pypto.lib.broadcast).
BROADCAST_OPS = ("add", "sub", "mul", "div", "maximum", "minimum")


def check_broadcast_lowerable(op: str, a: tuple, b: tuple, out: tuple, span: Span) -> None:
    """Reject at ``span`` a tile broadcast that NumPy allows but no lowering computes.

    PTO element-wise instructions take operands of one shape; broadcasts become expand ops
    (:mod:`pypto.lib.broadcast`), which exist for 2-D tiles of static shape only, and only the
    ``BROADCAST_OPS`` are lowered. Anything else would run the instruction over a smaller operand
    and read past its end, so it is an error here rather than a fault (or wrong numbers) at run time.
    """
    def same(x: tuple) -> bool:
        return len(x) == len(out) and all(dims_equal(p, q) for p, q in zip(x, out, strict=False))

    if same(a) and same(b):
        return
    short = op.split(".", 1)[-1]
    dims = [static_int(d) for d in (*a, *b, *out)]
    if short in BROADCAST_OPS and len(out) == 2 and None not in dims:
        return
    why = (
        f"'{short}' does not broadcast on tiles (only {', '.join(BROADCAST_OPS)} do)"
        if short not in BROADCAST_OPS
        else "tile broadcasting needs a 2-D result with static dims"
    )
    raise PyptoTypeError(
        f"{short}: operands {shape_str(a)} and {shape_str(b)} broadcast to {shape_str(out)}, but {why}; "
        "make the operands the same shape first (row_expand / col_expand, or load the full tile)",
        span,
    )


def arg_type(op: str, args: list, i: int, names: tuple, kind: type | tuple, span: Span) -> Any:
    t = getattr(args[i], "type", None)
    if not isinstance(t, kind):
        kinds = kind if isinstance(kind, tuple) else (kind,)
        want = " or ".join(k.__name__.replace("Type", "") for k in kinds)
        got = type_str(t) if t is not None else type(args[i]).__name__
        raise PyptoTypeError(f"{op}: argument '{names[i]}' must be a {want}, got {got}", span)
    return t


def tile(op: str, args: list, i: int, names: tuple, span: Span) -> TileType:
    return arg_type(op, args, i, names, TileType, span)


def scalar(op: str, args: list, i: int, names: tuple, span: Span) -> ScalarType:
    return arg_type(op, args, i, names, ScalarType, span)


def tensor(op: str, args: list, i: int, names: tuple, span: Span) -> TensorType:
    return arg_type(op, args, i, names, TensorType, span)


def int_list(op: str, e: Any, what: str, span: Span, static: bool = False) -> tuple:
    """Elements of a MakeTuple of integer scalars (ints when ``static``)."""
    if not isinstance(e, MakeTuple):
        raise PyptoTypeError(f"{op}: '{what}' must be a list of integers", span)
    out = []
    for el in e.elements:
        t = getattr(el, "type", None)
        if not isinstance(t, ScalarType) or not (t.dtype.is_int() or t.dtype is DataType.INDEX):
            raise PyptoTypeError(f"{op}: '{what}' entries must be integers", span)
        if static:
            v = static_int(el)
            if v is None or v <= 0:
                raise PyptoTypeError(f"{op}: '{what}' entries must be positive integer constants", span)
        out.append(el)
    return tuple(out)


def vec_view(shape: tuple, valid: tuple | None = None, **kw: Any) -> TileView:
    """Default view of a vector tile: column vectors (cols == 1) are col_major."""
    valid = valid if valid is not None else shape
    if "blayout" not in kw and len(shape) == 2 and static_int(shape[1]) == 1 and static_int(shape[0]) != 1:
        kw["blayout"] = TileLayout.col_major
    return TileView(valid_shape=valid, **kw)


def view_for_space(space: MemorySpace, shape: tuple, valid: tuple | None = None) -> TileView:
    valid = valid if valid is not None else shape
    if space is MemorySpace.Mat:
        return TileView(valid_shape=valid, blayout=TileLayout.col_major, slayout=TileLayout.row_major)
    if space is MemorySpace.Left:
        return TileView(valid_shape=valid, blayout=TileLayout.row_major, slayout=TileLayout.row_major)
    if space is MemorySpace.Right:
        return TileView(valid_shape=valid, blayout=TileLayout.row_major, slayout=TileLayout.col_major)
    if space is MemorySpace.Acc:
        return TileView(
            valid_shape=valid, blayout=TileLayout.col_major, slayout=TileLayout.row_major, fractal=1024
        )
    return vec_view(shape, valid)


def box_shape(view: TileView, dtype: DataType) -> tuple[int, int] | None:
    """(rows, cols) of one fractal box of a boxed tile, None for a plain (``none_box``) tile.

    pto-text-format §5.2: 512-byte fractals are ``16 x 32/sizeof(T)`` with ``slayout=row_major`` and
    ``32/sizeof(T) x 16`` with ``col_major``; 1024-byte (Acc) fractals are ``16 x 16``.
    """
    if view.slayout is TileLayout.none_box:
        return None
    if view.fractal == 1024:
        return 16, 16
    per_row = max(1, 32 // dtype.nbytes)
    return (16, per_row) if view.slayout is TileLayout.row_major else (per_row, 16)


def check_boxes(op: str, space: MemorySpace, shape: tuple, view: TileView, dtype: DataType, span: Span) -> None:
    """Reject a boxed (cube-side) tile whose static shape is not a whole number of fractal boxes.

    A partly filled box still occupies the whole box in memory (pto-text-format §5.3), so such a tile
    overlaps whatever is planned after it and the cube reads box padding as data: the compiler
    rejects it and names the padded shape, which with ``valid_shapes`` computes exactly the same
    values (the tail outside the valid region is zero-filled and never read).
    """
    box = box_shape(view, dtype)
    dims = [static_int(d) for d in shape]
    if box is None or len(dims) != 2 or None in dims:
        return
    rows, cols = dims
    ri, ci = box
    if (rows % ri == 0 or rows == 1) and cols % ci == 0:
        return
    padded = [rows if rows == 1 else -(-rows // ri) * ri, -(-cols // ci) * ci]
    valid = [static_int(d) for d in view.valid_shape] or dims
    vtext = ", ".join("?" if v is None else str(v) for v in valid)
    raise PyptoTypeError(
        f"{op}: a {space.name} tile of {dtype.name} is stored in {ri}x{ci} fractal boxes, so its shape must "
        f"be a multiple of [{ri}, {ci}] (rows of 1 excepted); got {shape_str(shape)}. Use the padded shape "
        f"[{padded[0]}, {padded[1]}] with valid_shapes=[{vtext}]",
        span,
    )


def same_dtype(op: str, a: Any, b: Any, span: Span) -> DataType:
    return promote(a.dtype, b.dtype)


def kind_name(t: Any) -> str:
    return type_kind(t)


def const_int(v: int) -> Expr:
    return ConstInt(v, DataType.INDEX)
