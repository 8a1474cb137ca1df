"""The IR ops of PyPTO-Lib: the tensor-level primitives and composites, and the two view casts.

Every op here is a tensor op (``tensor.<name>``) with NumPy shape rules, so ``pl.<name>(x)`` on a
Tensor builds one call in any function (InCore, Orchestration, an incore scope) and the program's
types are known before anything is tiled. What each op *computes* is its library definition
(:mod:`pypto.lib.elementwise`, :mod:`pypto.lib.reduction`, :mod:`pypto.lib.layout`,
:mod:`pypto.lib.composite`): PyPTO IR over the block ops, substituted for the call in InCore
functions by :class:`pypto.passes.expand_library_ops.ExpandLibraryOpsPass`.

The view casts of seed 003 §2.1 move no data:

* ``block.cast_tensor_to_tile(tensor, offsets, sizes, valid; pad)`` is the tile that *is* the
  ``sizes`` window of ``tensor`` at ``offsets`` (``valid`` of it is real data, a run-time expression
  for a dynamic row count; ``pad`` says what a consumer needs in the rest: zero for a sum, min
  (-inf) for a max, max (+inf) for a min);
* ``tensor.cast_tile_to_tensor(tile)`` is the tensor view of a tile's valid region.

They exist while the library's loops are being built and fused; once a kernel's boundary is known,
:class:`pypto.passes.materialize_tile_views.MaterializeTileViewsPass` turns a cast of a kernel's
GM tensor into a TLOAD and an ``assemble`` of a cast tile into a TSTORE (seed 003 §2: TLOAD/TSTORE
appear only once incore boundaries are set).
"""

from __future__ import annotations

import builtins
from typing import Any

from pypto.dtype import DataType, promote
from pypto.enums import TilePad
from pypto.errors import PyptoTypeError, Span
from pypto.ir.expr import Call, ConstInt, Expr, MakeTuple, as_expr, static_int
from pypto.ir.registry import create_op_call, register_op
from pypto.ir.type_rules import broadcast_shapes, int_list, tensor, vec_view
from pypto.ir.types import ScalarType, TensorType, TileType, shape_str
from pypto.ops.common import scalar_arg, to_tuple

TENSOR = "TensorOp"
LIB = "LibOp"

UNARY = ("neg", "sqrt", "rsqrt", "reciprocal", "log", "abs", "relu", "sigmoid", "tanh", "gelu", "silu")
# binary ops new to the library (add/sub/mul/div/maximum and their scalar forms live in pypto.ops.tensor)
BINARY = ("minimum",)
SCALAR = ("maximum_scalar", "minimum_scalar", "rdiv_scalar")  # rdiv_scalar(x, s) is s / x
REDUCTIONS = ("sum", "max", "min", "mean")
COMPOSITES = ("softmax", "log_softmax", "layer_norm", "rms_norm", "swiglu")


# ----------------------------------------------------------------------------- view casts


@register_op("block.cast_tensor_to_tile", LIB, ("tensor", "offsets", "sizes", "valid"), attrs={"pad": int})
def _cast_tensor_to_tile(args: list, kw: dict, span: Span) -> TileType:
    t = tensor("cast_tensor_to_tile", args, 0, ("tensor",), span)
    offs = int_list("cast_tensor_to_tile", args[1], "offsets", span)
    sizes = int_list("cast_tensor_to_tile", args[2], "sizes", span, static=True)
    valid = int_list("cast_tensor_to_tile", args[3], "valid", span)  # a run-time row count is dynamic
    if not len(offs) == len(t.shape) or len(sizes) != len(valid) or not sizes:
        raise PyptoTypeError(
            f"cast_tensor_to_tile: {len(offs)} offsets, {len(sizes)} sizes and {len(valid)} valid dims for a "
            f"rank-{len(t.shape)} tensor",
            span,
        )
    for o, v, d in zip(offs[len(offs) - len(valid):], valid, t.shape[len(t.shape) - len(valid):], strict=False):
        so, sv, sd = static_int(o), static_int(v), static_int(d)
        if None not in (so, sv, sd) and so + sv > sd:
            raise PyptoTypeError(f"cast_tensor_to_tile: window [{so}, {so + sv}) leaves dim of size {sd}", span)
    pad = TilePad(kw.get("pad", int(TilePad.null)))
    return TileType(sizes, t.dtype, tile_view=vec_view(sizes, valid, pad=pad))


@register_op("tensor.cast_tile_to_tensor", LIB, ("tile",), attrs={"rank": int})
def _cast_tile_to_tensor(args: list, kw: dict, span: Span) -> TensorType:
    """The tile's valid region as a tensor; ``rank`` adds leading unit dims (a slice of an N-D tensor)."""
    t = getattr(args[0], "type", None)
    if not isinstance(t, TileType):
        raise PyptoTypeError("cast_tile_to_tensor: needs a tile", span)
    ones = (ConstInt(1, DataType.INDEX),) * builtins.max(0, kw.get("rank", len(t.valid_shape)) - len(t.valid_shape))
    return TensorType(ones + tuple(t.valid_shape), t.dtype)


def cast_tensor_to_tile(tensor: Expr, offsets: Any, sizes: Any, valid: Any = None, pad: TilePad = TilePad.null,
                        span: Span | None = None) -> Call:
    """The tile viewing the ``sizes`` window of ``tensor`` at ``offsets`` (no data moves)."""
    args = [tensor, to_tuple(offsets, span, "offsets"), to_tuple(sizes, span, "sizes"),
            to_tuple(valid if valid is not None else sizes, span, "valid")]
    return create_op_call("block.cast_tensor_to_tile", args, {"pad": int(pad) or None}, span)


def cast_tile_to_tensor(tile: Expr, rank: int | None = None, span: Span | None = None) -> Call:
    """The tensor viewing ``tile``'s valid region (no data moves), with ``rank`` dims."""
    n = len(tile.type.valid_shape)
    return create_op_call("tensor.cast_tile_to_tensor", [tile], {"rank": rank if rank and rank != n else None}, span)


@register_op("tensor.as_shape", LIB, ("tensor", "shape"))
def _as_shape(args: list, kw: dict, span: Span) -> TensorType:
    """The same GM bytes of a (contiguous, row-major) kernel tensor seen with another shape of as many
    elements: a second tensor view of the kernel argument, no data moves (a reshape's source)."""
    t = tensor("tensor.as_shape", args, 0, ("tensor", "shape"), span)
    shape = int_list("tensor.as_shape", args[1], "shape", span, static=True)
    n_old, n_new = 1, 1
    for d in t.shape:
        n_old = n_old * static_int(d) if static_int(d) is not None and n_old is not None else None
    for d in shape:
        n_new *= static_int(d)
    if n_old != n_new:
        raise PyptoTypeError(f"tensor.as_shape: {shape_str(t.shape)} is not {n_new} elements", span)
    return TensorType(shape, t.dtype)


def as_shape(tensor: Expr, shape: Any, span: Span | None = None) -> Call:
    """Kernel tensor ``tensor`` viewed as ``shape`` (no data moves)."""
    return create_op_call("tensor.as_shape", [tensor, to_tuple(shape, span, "shape")], {}, span)


# ----------------------------------------------------------------------------- primitives


def _unary(name: str) -> None:
    def deduce(args: list, kw: dict, span: Span) -> TensorType:
        t = tensor(name, args, 0, ("input",), span)
        if name != "tensor.neg" and name != "tensor.abs" and name != "tensor.relu" and not t.dtype.is_float():
            raise PyptoTypeError(f"{name}: needs a float tensor, got {t.dtype.name}", span)
        return TensorType(t.shape, t.dtype)

    register_op(name, TENSOR, ("input",))(deduce)


for _n in UNARY:
    _unary("tensor." + _n)


@register_op("tensor.minimum", TENSOR, ("lhs", "rhs"))
def _minimum(args: list, kw: dict, span: Span) -> TensorType:
    a, b = tensor("tensor.minimum", args, 0, ("lhs", "rhs"), span), tensor("tensor.minimum", args, 1, ("lhs", "rhs"), span)
    return TensorType(broadcast_shapes(a.shape, b.shape, "tensor.minimum", span), promote(a.dtype, b.dtype))


def _scalar_op(name: str) -> None:
    def deduce(args: list, kw: dict, span: Span) -> TensorType:
        a = tensor(name, args, 0, ("lhs", "rhs"), span)
        if not isinstance(getattr(args[1], "type", None), ScalarType):
            raise PyptoTypeError(f"{name}: 'rhs' must be a scalar", span)
        return TensorType(a.shape, promote(a.dtype, args[1].type.dtype))

    register_op(name, TENSOR, ("lhs", "rhs"))(deduce)


for _n in SCALAR:
    _scalar_op("tensor." + _n)


@register_op("tensor.pow", TENSOR, ("input", "exponent"))
def _pow(args: list, kw: dict, span: Span) -> TensorType:
    t = tensor("tensor.pow", args, 0, ("input", "exponent"), span)
    n = static_int(args[1])
    if n is None:
        raise PyptoTypeError("tensor.pow: the exponent must be an integer constant (pow by an integer)", span)
    if n < 0 and not t.dtype.is_float():
        raise PyptoTypeError(f"tensor.pow: a negative exponent needs a float tensor, got {t.dtype.name}", span)
    return TensorType(t.shape, t.dtype)


def reduce_axes(name: str, rank: int, axis: Any, span: Span) -> tuple[int, ...]:
    """The normalised, sorted, distinct axes an ``axis`` argument names (``None``: all of them)."""
    if axis is None:
        return tuple(range(rank))
    items = axis.elements if isinstance(axis, MakeTuple) else (axis,)
    out = []
    for a in items:
        v = static_int(a)
        if v is None or not -rank <= v < rank:
            raise PyptoTypeError(f"{name}: axis {v if v is not None else a} is not a constant in range for rank {rank}",
                                 span)
        if v % rank in out:
            raise PyptoTypeError(f"{name}: axis {v} is named twice", span)
        out.append(v % rank)
    return tuple(sorted(out))


def _reduction(name: str) -> None:
    def deduce(args: list, kw: dict, span: Span) -> TensorType:
        t = tensor(name, args, 0, ("input", "axis"), span)
        if name == "tensor.mean" and not t.dtype.is_float():
            raise PyptoTypeError(f"tensor.mean: needs a float tensor, got {t.dtype.name}", span)
        axes = reduce_axes(name, len(t.shape), args[1] if len(args) > 1 else None, span)
        one = ConstInt(1, DataType.INDEX)
        if kw.get("keepdim"):
            shape = tuple(one if i in axes else d for i, d in enumerate(t.shape))
        else:
            shape = tuple(d for i, d in enumerate(t.shape) if i not in axes)
        return TensorType(shape, t.dtype)

    register_op(name, TENSOR, ("input", "axis"), attrs={"keepdim": bool}, min_args=1)(deduce)


for _n in REDUCTIONS:
    _reduction("tensor." + _n)


@register_op("tensor.broadcast_to", TENSOR, ("input", "shape"))
def _broadcast_to(args: list, kw: dict, span: Span) -> TensorType:
    t = tensor("tensor.broadcast_to", args, 0, ("input", "shape"), span)
    shape = int_list("tensor.broadcast_to", args[1], "shape", span)  # a dim may be dynamic (another tensor's)
    out = broadcast_shapes(t.shape, shape, "tensor.broadcast_to", span)
    if len(out) != len(shape) or any(static_int(a) != static_int(b) for a, b in zip(out, shape, strict=False)):
        raise PyptoTypeError(f"tensor.broadcast_to: {shape_str(t.shape)} does not broadcast to {shape_str(shape)}",
                             span)
    return TensorType(shape, t.dtype)


@register_op("tensor.permute", TENSOR, ("input", "axes"))
def _permute(args: list, kw: dict, span: Span) -> TensorType:
    """NumPy's ``transpose(x, axes)``: result axis ``k`` is ``x``'s axis ``axes[k]``."""
    t = tensor("tensor.permute", args, 0, ("input", "axes"), span)
    rank = len(t.shape)
    axes = [static_int(a) for a in (args[1].elements if isinstance(args[1], MakeTuple) else (args[1],))]
    if None in axes or sorted(a % rank for a in axes if -rank <= a < rank) != list(range(rank)) or len(axes) != rank:
        raise PyptoTypeError(f"tensor.permute: axes {axes} are not a permutation of the {rank} axes of "
                             f"{shape_str(t.shape)}", span)
    return TensorType(tuple(t.shape[a % rank] for a in axes), t.dtype)


@register_op("tensor.slice", TENSOR, ("input", "shape", "offset"))
def _slice(args: list, kw: dict, span: Span) -> TensorType:
    t = tensor("tensor.slice", args, 0, ("input", "shape", "offset"), span)
    shape = int_list("tensor.slice", args[1], "shape", span, static=True)
    offs = int_list("tensor.slice", args[2], "offset", span)
    if len(shape) != len(t.shape) or len(offs) != len(t.shape):
        raise PyptoTypeError(f"tensor.slice: shape and offset need rank {len(t.shape)}", span)
    for i, (o, n, d) in enumerate(zip(offs, shape, t.shape, strict=False)):
        so, sn, sd = static_int(o), static_int(n), static_int(d)
        if so is None:
            raise PyptoTypeError("tensor.slice: offsets must be constants", span)
        if sd is not None and (so < 0 or so + sn > sd):
            raise PyptoTypeError(f"tensor.slice: [{so}, {so + sn}) leaves dim {i} of size {sd}", span)
    return TensorType(shape, t.dtype)


@register_op("tensor.concat", TENSOR, ("lhs", "rhs"), attrs={"axis": int})
def _concat(args: list, kw: dict, span: Span) -> TensorType:
    a, b = tensor("tensor.concat", args, 0, ("lhs", "rhs"), span), tensor("tensor.concat", args, 1, ("lhs", "rhs"), span)
    rank = len(a.shape)
    axis = kw.get("axis", 0)
    if len(b.shape) != rank or not -rank <= axis < rank:
        raise PyptoTypeError(f"tensor.concat: ranks {len(a.shape)} and {len(b.shape)}, axis {axis}", span)
    axis %= rank
    if a.dtype is not b.dtype:
        raise PyptoTypeError(f"tensor.concat: dtypes {a.dtype.name} and {b.dtype.name} differ", span)
    for i, (x, y) in enumerate(zip(a.shape, b.shape, strict=False)):
        if i != axis and static_int(x) != static_int(y):
            raise PyptoTypeError(f"tensor.concat: {shape_str(a.shape)} and {shape_str(b.shape)} differ off axis {axis}",
                                 span)
    if static_int(a.shape[axis]) is None or static_int(b.shape[axis]) is None:
        raise PyptoTypeError(f"tensor.concat: along a dynamic axis ({shape_str(a.shape)} and {shape_str(b.shape)}, "
                             f"axis {axis}) the result's extent is a sum no parameter holds; concat along a static "
                             "axis (the other dims may be dynamic)", span)
    n = static_int(a.shape[axis]) + static_int(b.shape[axis])
    return TensorType(tuple(ConstInt(n, DataType.INDEX) if i == axis else d for i, d in enumerate(a.shape)), a.dtype)


# ----------------------------------------------------------------------------- composites


def _last_axis(name: str, t: TensorType, kw: dict, span: Span) -> None:
    axis = kw.get("axis", -1)
    if not t.shape or axis % len(t.shape) != len(t.shape) - 1:
        raise PyptoTypeError(f"{name}: normalises over the last axis (axis=-1), got axis {axis}", span)
    if not t.dtype.is_float():
        raise PyptoTypeError(f"{name}: needs a float tensor, got {t.dtype.name}", span)


def _softmax_like(name: str) -> None:
    def deduce(args: list, kw: dict, span: Span) -> TensorType:
        t = tensor(name, args, 0, ("input",), span)
        _last_axis(name, t, kw, span)
        return TensorType(t.shape, t.dtype)

    register_op(name, TENSOR, ("input",), attrs={"axis": int})(deduce)


_softmax_like("tensor.softmax")
_softmax_like("tensor.log_softmax")


def _check_weight(name: str, t: TensorType, w: TensorType, what: str, span: Span) -> None:
    if len(w.shape) != 1 or static_int(w.shape[0]) != static_int(t.shape[-1]) or w.dtype is not t.dtype:
        raise PyptoTypeError(
            f"{name}: '{what}' must be a [{static_int(t.shape[-1])}] {t.dtype.name} vector, got "
            f"{shape_str(w.shape)} {w.dtype.name}", span)


@register_op("tensor.layer_norm", TENSOR, ("input", "weight", "bias"), attrs={"eps": float})
def _layer_norm(args: list, kw: dict, span: Span) -> TensorType:
    names = ("input", "weight", "bias")
    t = tensor("tensor.layer_norm", args, 0, names, span)
    _last_axis("tensor.layer_norm", t, {}, span)
    _check_weight("tensor.layer_norm", t, tensor("tensor.layer_norm", args, 1, names, span), "weight", span)
    _check_weight("tensor.layer_norm", t, tensor("tensor.layer_norm", args, 2, names, span), "bias", span)
    return TensorType(t.shape, t.dtype)


@register_op("tensor.rms_norm", TENSOR, ("input", "weight"), attrs={"eps": float})
def _rms_norm(args: list, kw: dict, span: Span) -> TensorType:
    t = tensor("tensor.rms_norm", args, 0, ("input", "weight"), span)
    _last_axis("tensor.rms_norm", t, {}, span)
    _check_weight("tensor.rms_norm", t, tensor("tensor.rms_norm", args, 1, ("input", "weight"), span), "weight", span)
    return TensorType(t.shape, t.dtype)


@register_op("tensor.swiglu", TENSOR, ("gate", "up"))
def _swiglu(args: list, kw: dict, span: Span) -> TensorType:
    g, u = tensor("tensor.swiglu", args, 0, ("gate", "up"), span), tensor("tensor.swiglu", args, 1, ("gate", "up"), span)
    if not g.dtype.is_float():
        raise PyptoTypeError(f"tensor.swiglu: needs float tensors, got {g.dtype.name}", span)
    return TensorType(broadcast_shapes(g.shape, u.shape, "tensor.swiglu", span), promote(g.dtype, u.dtype))


# ----------------------------------------------------------------------------- builders (bound to pl)


def _unary_builder(name: str):
    def build(input: Expr, span: Span | None = None) -> Call:
        return create_op_call("tensor." + name, [input], {}, span)

    build.__name__ = name
    return build


neg, sqrt, rsqrt, reciprocal, log, abs, relu, sigmoid, tanh, gelu, silu = (_unary_builder(n) for n in UNARY)
recip = reciprocal


def minimum(lhs: Expr, rhs: Any, span: Span | None = None) -> Call:
    if isinstance(getattr(rhs, "type", None), TensorType):
        return create_op_call("tensor.minimum", [lhs, rhs], {}, span)
    return create_op_call("tensor.minimum_scalar", [lhs, scalar_arg(rhs, None, span)], {}, span)


def rdiv_scalar(lhs: Expr, rhs: Any, span: Span | None = None) -> Call:
    """``rhs / lhs``: a scalar divided by each element of tensor ``lhs`` (Python's ``s / x``)."""
    return create_op_call("tensor.rdiv_scalar", [lhs, scalar_arg(rhs, None, span)], {}, span)


def maximum(lhs: Expr, rhs: Any, span: Span | None = None) -> Call:
    if isinstance(getattr(rhs, "type", None), TensorType):
        return create_op_call("tensor.maximum", [lhs, rhs], {}, span)
    return create_op_call("tensor.maximum_scalar", [lhs, scalar_arg(rhs, None, span)], {}, span)


def pow(input: Expr, exponent: Any, span: Span | None = None) -> Call:
    return create_op_call("tensor.pow", [input, as_expr(exponent, span)], {}, span)


def _axis_arg(axis: Any, span: Span | None) -> Any:
    if axis is None:
        return None
    if isinstance(axis, (list, tuple, MakeTuple)):
        return to_tuple(axis, span, "axis")
    return as_expr(axis, span)


def _reduction_builder(name: str):
    def build(input: Expr, axis: Any = None, keepdim: bool = False, span: Span | None = None) -> Call:
        args = [input] if axis is None else [input, _axis_arg(axis, span)]
        return create_op_call("tensor." + name, args, {"keepdim": bool(keepdim) or None}, span)

    build.__name__ = name
    return build


sum, max, min, mean = (_reduction_builder(n) for n in REDUCTIONS)


def broadcast_to(input: Expr, shape: Any, span: Span | None = None) -> Call:
    return create_op_call("tensor.broadcast_to", [input, to_tuple(shape, span, "shape")], {}, span)


def slice(input: Expr, shape: Any, offset: Any, span: Span | None = None) -> Call:
    return create_op_call("tensor.slice", [input, to_tuple(shape, span, "shape"), to_tuple(offset, span, "offset")],
                          {}, span)


def permute(input: Expr, axes: Any, span: Span | None = None) -> Call:
    """``x`` with its axes permuted (NumPy ``np.transpose(x, axes)``, torch ``x.permute(axes)``)."""
    return create_op_call("tensor.permute", [input, to_tuple(axes, span, "axes")], {}, span)


def transpose(input: Expr, axis1: Any = None, axis2: Any = None, span: Span | None = None) -> Call:
    """``pl.transpose(x, i, j)`` swaps two axes; ``pl.transpose(x, axes)`` permutes them all and
    ``pl.transpose(x)`` reverses them (NumPy's ``np.transpose``)."""
    rank = len(input.type.shape)
    if axis1 is None and axis2 is None:
        return permute(input, list(range(rank - 1, -1, -1)), span)
    if axis2 is None:
        return permute(input, axis1, span)
    return create_op_call("tensor.transpose", [input, as_expr(axis1, span), as_expr(axis2, span)], {}, span)


def concat(lhs: Expr, rhs: Expr, axis: int = -1, span: Span | None = None) -> Call:
    """``lhs`` and ``rhs`` joined along ``axis``; by default the last one, so ``pl.concat(a, b)`` of two
    ``[r, c]`` tensors is ``[r, ca + cb]`` as spec pypto-jit §6.5 says and as the tile form (``tconcat``)
    joins (the seed documents do not say; torch's ``cat`` defaults to rows, pass ``axis=0`` for that)."""
    return create_op_call("tensor.concat", [lhs, rhs], {"axis": axis}, span)


def softmax(input: Expr, axis: int = -1, span: Span | None = None) -> Call:
    return create_op_call("tensor.softmax", [input], {"axis": axis}, span)


def log_softmax(input: Expr, axis: int = -1, span: Span | None = None) -> Call:
    return create_op_call("tensor.log_softmax", [input], {"axis": axis}, span)


def layer_norm(input: Expr, weight: Expr, bias: Expr, eps: float = 1e-5, span: Span | None = None) -> Call:
    return create_op_call("tensor.layer_norm", [input, weight, bias], {"eps": float(eps)}, span)


def rms_norm(input: Expr, weight: Expr, eps: float = 1e-6, span: Span | None = None) -> Call:
    return create_op_call("tensor.rms_norm", [input, weight], {"eps": float(eps)}, span)


def swiglu(gate: Expr, up: Expr, span: Span | None = None) -> Call:
    return create_op_call("tensor.swiglu", [gate, up], {}, span)


# names pl.<name> resolves here when the first argument is a Tensor
BUILDERS = {
    **{n: globals()[n] for n in UNARY},
    "recip": recip, "minimum": minimum, "maximum": maximum, "pow": pow, "rdiv_scalar": rdiv_scalar,
    "sum": sum, "max": max, "min": min, "mean": mean,
    "broadcast_to": broadcast_to, "slice": slice, "concat": concat, "permute": permute, "transpose": transpose,
    "softmax": softmax, "log_softmax": log_softmax, "layer_norm": layer_norm, "rms_norm": rms_norm,
    "swiglu": swiglu,
}
