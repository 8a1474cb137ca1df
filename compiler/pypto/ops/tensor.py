"""Tensor ops (DDR level; spec §4). The host-side runtime evaluates them with NumPy."""

from __future__ import annotations

from typing import Any

from pypto.dtype import DataType, promote
from pypto.enums import AtomicType
from pypto.errors import PyptoTypeError, Span
from pypto.ir.expr import Call, ConstInt, Expr, as_expr, static_int
from pypto.ir.registry import create_op_call, register_op
from pypto.ir.type_rules import broadcast_shapes, int_list, scalar, tensor
from pypto.ir.types import ScalarType, TensorType, shape_str
from pypto.ops.block import ATOMIC_ADD_DTYPES, check_round_mode, round_mode_code
from pypto.ops.common import scalar_arg, to_tuple

TENSOR = "TensorOp"


@register_op("tensor.create", TENSOR, ("shape",), attrs={"dtype": DataType, "manual_dep": bool})
def _create(args: list, kw: dict, span: Span) -> TensorType:
    shape = int_list("tensor.create", args[0], "shape", span)
    if "dtype" not in kw:
        raise PyptoTypeError("tensor.create requires 'dtype'", span)
    return TensorType(shape, kw["dtype"])


@register_op("tensor.dim", TENSOR, ("tensor", "axis"))
def _dim(args: list, kw: dict, span: Span) -> ScalarType:
    t = tensor("tensor.dim", args, 0, ("tensor", "axis"), span)
    axis = static_int(args[1])
    if axis is None or not -len(t.shape) <= axis < len(t.shape):
        raise PyptoTypeError(f"tensor.dim: axis must be a constant in range for rank {len(t.shape)}", span)
    return ScalarType(DataType.INDEX)


@register_op("tensor.read", TENSOR, ("tensor", "indices"))
def _read(args: list, kw: dict, span: Span) -> ScalarType:
    t = tensor("tensor.read", args, 0, ("tensor", "indices"), span)
    idx = int_list("tensor.read", args[1], "indices", span)
    if len(idx) != len(t.shape):
        raise PyptoTypeError(f"tensor.read: needs {len(t.shape)} indices, got {len(idx)}", span)
    return ScalarType(t.dtype)


@register_op("tensor.write", TENSOR, ("tensor", "indices", "value"))
def _write(args: list, kw: dict, span: Span) -> TensorType:
    """A host store of one element (orchestration ``pl.write``); the result is the tensor."""
    names = ("tensor", "indices", "value")
    t = tensor("tensor.write", args, 0, names, span)
    idx = int_list("tensor.write", args[1], "indices", span)
    v = scalar("tensor.write", args, 2, names, span)
    if len(idx) != len(t.shape):
        raise PyptoTypeError(f"tensor.write: needs {len(t.shape)} indices, got {len(idx)}", span)
    if v.dtype is not t.dtype:
        raise PyptoTypeError(f"write: the value is {v.dtype.name} but the tensor is {t.dtype.name}; "
                             "convert it with pl.cast", span)
    return t


@register_op("tensor.view", TENSOR, ("tensor", "shape", "offset"))
def _view(args: list, kw: dict, span: Span) -> TensorType:
    t = tensor("tensor.view", args, 0, ("tensor", "shape", "offset"), span)
    shape = int_list("tensor.view", args[1], "shape", span)
    offs = int_list("tensor.view", args[2], "offset", span)
    if len(shape) != len(t.shape) or len(offs) != len(t.shape):
        raise PyptoTypeError(f"tensor.view: shape and offset need rank {len(t.shape)}", span)
    return TensorType(shape, t.dtype)


@register_op("tensor.assemble", TENSOR, ("target", "source", "offset"), attrs={"atomic": AtomicType})
def _assemble(args: list, kw: dict, span: Span) -> TensorType:
    """Write ``source`` into ``target`` at ``offset``; the result is the updated target (spec §4.2).
    ``atomic=AtomicType.Add`` adds it into the window instead (pypto-jit §6.4)."""
    names = ("target", "source", "offset")
    t, src = tensor("tensor.assemble", args, 0, names, span), tensor("tensor.assemble", args, 1, names, span)
    if kw.get("atomic", AtomicType.None_) is AtomicType.Add and t.dtype not in ATOMIC_ADD_DTYPES:
        allowed = ", ".join(d.name for d in ATOMIC_ADD_DTYPES)
        raise PyptoTypeError(f"tensor.assemble: an atomic add into {t.dtype.name} is not supported (atomic adds "
                             f"take {allowed})", span)
    offs = int_list("tensor.assemble", args[2], "offset", span)
    if len(src.shape) != len(t.shape) or len(offs) != len(t.shape):
        raise PyptoTypeError(
            f"tensor.assemble: source {shape_str(src.shape)} and offset need the target's rank {len(t.shape)}", span
        )
    if src.dtype is not t.dtype:
        raise PyptoTypeError(f"tensor.assemble: source is {src.dtype.name}, target is {t.dtype.name}", span)
    for o, n, d in zip(offs, src.shape, t.shape, strict=False):
        so, sn, sd = static_int(o), static_int(n), static_int(d)
        if None not in (so, sn, sd) and (so < 0 or so + sn > sd):
            raise PyptoTypeError(
                f"tensor.assemble: source {shape_str(src.shape)} at offset {so} leaves target {shape_str(t.shape)}",
                span,
            )
    return t


def _count(shape: tuple) -> int | None:
    n = 1
    for d in shape:
        v = static_int(d)
        if v is None:
            return None
        n *= v
    return n


@register_op("tensor.reshape", TENSOR, ("tensor", "shape"))
def _reshape(args: list, kw: dict, span: Span) -> TensorType:
    t = tensor("tensor.reshape", args, 0, ("tensor", "shape"), span)
    shape = int_list("tensor.reshape", args[1], "shape", span)
    old, new = _count(t.shape), _count(tuple(shape))
    if None not in (old, new) and old != new:
        raise PyptoTypeError(f"tensor.reshape: {shape_str(t.shape)} has {old} elements, not {new}", span)
    return TensorType(shape, t.dtype)


@register_op("tensor.transpose", TENSOR, ("tensor", "axis1", "axis2"))
def _transpose(args: list, kw: dict, span: Span) -> TensorType:
    t = tensor("tensor.transpose", args, 0, ("tensor", "axis1", "axis2"), span)
    rank = len(t.shape)
    axes = [static_int(a) for a in args[1:3]]
    if rank < 2 or None in axes or not all(-rank <= a < rank for a in axes) or axes[0] % rank == axes[1] % rank:
        raise PyptoTypeError(
            f"tensor.transpose: axes must be two different constants in range for rank {rank} (rank >= 2)", span
        )
    shape = list(t.shape)
    i, j = axes[0] % rank, axes[1] % rank
    shape[i], shape[j] = shape[j], shape[i]
    return TensorType(tuple(shape), t.dtype)


def _tt(name: str):
    names = ("lhs", "rhs")

    def deduce(args: list, kw: dict, span: Span) -> TensorType:
        a, b = tensor(name, args, 0, names, span), tensor(name, args, 1, names, span)
        return TensorType(broadcast_shapes(a.shape, b.shape, name, span), promote(a.dtype, b.dtype))

    register_op(name, TENSOR, names)(deduce)


def _ts(name: str):
    names = ("lhs", "rhs")

    def deduce(args: list, kw: dict, span: Span) -> TensorType:
        a, s = tensor(name, args, 0, names, span), scalar(name, args, 1, names, span)
        return TensorType(a.shape, promote(a.dtype, s.dtype))

    register_op(name, TENSOR, names)(deduce)


for _n in ("add", "sub", "mul", "div", "maximum"):
    _tt("tensor." + _n)
    if _n != "maximum":
        _ts(f"tensor.{_n}_scalar")


@register_op("tensor.exp", TENSOR, ("input",))
def _exp(args: list, kw: dict, span: Span) -> TensorType:
    t = tensor("tensor.exp", args, 0, ("input",), span)
    return TensorType(t.shape, t.dtype if t.dtype.is_float() else DataType.FP32)


@register_op("tensor.cast", TENSOR, ("input",), attrs={"target_type": DataType, "mode": int})
def _cast(args: list, kw: dict, span: Span) -> TensorType:
    t = tensor("tensor.cast", args, 0, ("input",), span)
    check_round_mode("tensor.cast", kw, span)
    return TensorType(t.shape, kw.get("target_type", t.dtype))


@register_op(
    "tensor.matmul",
    TENSOR,
    ("lhs", "rhs"),
    attrs={"out_dtype": DataType, "a_trans": bool, "b_trans": bool, "c_matrix_nz": bool},
)
def _matmul(args: list, kw: dict, span: Span) -> TensorType:
    """NumPy ``matmul`` shapes (spec §4.7): 1-D operands gain and then lose a unit dim, batch dims
    (all but the last two) broadcast."""
    a, b = tensor("tensor.matmul", args, 0, ("lhs", "rhs"), span), tensor("tensor.matmul", args, 1, ("lhs", "rhs"), span)
    dtype = kw.get("out_dtype") or promote(a.dtype, b.dtype)
    if not a.shape or not b.shape:
        raise PyptoTypeError("tensor.matmul: operands must have rank >= 1", span)
    one = ConstInt(1, DataType.INDEX)
    sa = a.shape if len(a.shape) > 1 else (one,) + tuple(a.shape)
    sb = b.shape if len(b.shape) > 1 else tuple(b.shape) + (one,)
    m = sa[-1] if kw.get("a_trans") else sa[-2]
    k1 = sa[-2] if kw.get("a_trans") else sa[-1]
    k2 = sb[-1] if kw.get("b_trans") else sb[-2]
    n = sb[-2] if kw.get("b_trans") else sb[-1]
    if None not in (static_int(k1), static_int(k2)) and static_int(k1) != static_int(k2):
        trans = "".join(f", {k}=True" for k in ("a_trans", "b_trans") if kw.get(k))
        raise PyptoTypeError(f"tensor.matmul: K dims differ: {shape_str(a.shape)} x {shape_str(b.shape)}{trans} "
                             f"(K = {static_int(k1)} and {static_int(k2)})", span)
    batch = broadcast_shapes(tuple(sa[:-2]), tuple(sb[:-2]), "tensor.matmul batch dims", span)
    out = tuple(batch) + ((m,) if len(a.shape) > 1 else ()) + ((n,) if len(b.shape) > 1 else ())
    return TensorType(out, dtype)


def _row_reduce(name: str):
    def deduce(args: list, kw: dict, span: Span) -> TensorType:
        t = tensor(name, args, 0, ("input",), span)
        axis = kw.get("axis", -1)
        if axis is not None and not (-len(t.shape) <= axis < len(t.shape) and axis % len(t.shape) == len(t.shape) - 1):
            raise PyptoTypeError(f"{name}: reduces the last axis only (axis -1 or {len(t.shape) - 1}), got {axis}",
                                 span)
        keep = kw.get("keep_dim", True)
        return TensorType(t.shape[:-1] + ((ConstInt(1, DataType.INDEX),) if keep or keep is None else ()), t.dtype)

    register_op(name, TENSOR, ("input",), attrs={"axis": int, "keep_dim": bool})(deduce)


_row_reduce("tensor.row_max")
_row_reduce("tensor.row_sum")


# ----------------------------------------------------------------------------- builders


def create(shape: Any, dtype: DataType, manual_dep: bool = False, span: Span | None = None) -> Call:
    """A DDR tensor. ``manual_dep=True`` (spec pypto-jit §9): the runtime infers no dependency through
    it for its whole lifetime, so tasks that share it are ordered only by declared ``deps=``."""
    kw: dict = {"dtype": dtype}
    if manual_dep:
        kw["manual_dep"] = True
    return create_op_call("tensor.create", [to_tuple(shape, span, "shape")], kw, span)


create_tensor = create


def dim(tensor: Expr, axis: int, span: Span | None = None) -> Call:
    return create_op_call("tensor.dim", [tensor, as_expr(axis, span)], {}, span)


def read(tensor: Expr, indices: Any, span: Span | None = None) -> Call:
    return create_op_call("tensor.read", [tensor, to_tuple(indices, span, "indices")], {}, span)


def write(tensor: Expr, indices: Any, value: Expr, span: Span | None = None) -> Call:
    return create_op_call("tensor.write", [tensor, to_tuple(indices, span, "indices"), value], {}, span)


def view(tensor: Expr, shape: Any, offset: Any, span: Span | None = None) -> Call:
    return create_op_call(
        "tensor.view", [tensor, to_tuple(shape, span, "shape"), to_tuple(offset, span, "offset")], {}, span
    )


def _binary(op: str):
    def build(lhs: Expr, rhs: Any, span: Span | None = None) -> Call:
        if isinstance(getattr(rhs, "type", None), TensorType):
            return create_op_call("tensor." + op, [lhs, rhs], {}, span)
        if op == "maximum":
            raise PyptoTypeError("tensor.maximum needs two tensors", span)
        return create_op_call(f"tensor.{op}_scalar", [lhs, scalar_arg(rhs, None, span)], {}, span)

    build.__name__ = op
    return build


add, sub, mul, div, maximum = (_binary(n) for n in ("add", "sub", "mul", "div", "maximum"))


def add_scalar(lhs: Expr, rhs: Any, span: Span | None = None) -> Call:
    return create_op_call("tensor.add_scalar", [lhs, scalar_arg(rhs, None, span)], {}, span)


def exp(input: Expr, span: Span | None = None) -> Call:
    return create_op_call("tensor.exp", [input], {}, span)


def cast(input: Expr, target_type: DataType, mode: Any = "round", span: Span | None = None) -> Call:
    return create_op_call("tensor.cast", [input], {"target_type": target_type, "mode": round_mode_code(mode, span)}, span)


def matmul(
    lhs: Expr,
    rhs: Expr,
    out_dtype: DataType | None = None,
    a_trans: bool = False,
    b_trans: bool = False,
    c_matrix_nz: bool = False,
    span: Span | None = None,
) -> Call:
    kw = {"out_dtype": out_dtype, "a_trans": a_trans or None, "b_trans": b_trans or None}
    kw["c_matrix_nz"] = c_matrix_nz or None
    return create_op_call("tensor.matmul", [lhs, rhs], kw, span)


def _reduce_kwargs(axis: int, keep_dim: bool) -> dict:
    """The defaults (last axis, kept as a unit dim) are left out so the IR matches the plain call."""
    return {"axis": None if axis == -1 else axis, "keep_dim": None if keep_dim else False}


def row_max(input: Expr, axis: int = -1, keep_dim: bool = True, span: Span | None = None) -> Call:
    return create_op_call("tensor.row_max", [input], _reduce_kwargs(axis, keep_dim), span)


def row_sum(input: Expr, axis: int = -1, keep_dim: bool = True, span: Span | None = None) -> Call:
    return create_op_call("tensor.row_sum", [input], _reduce_kwargs(axis, keep_dim), span)


def assemble(target: Expr, source: Expr, offset: Any, atomic: Any = None, span: Span | None = None) -> Call:
    if atomic is not None and not isinstance(atomic, AtomicType):
        raise PyptoTypeError(f"tensor.assemble: atomic= takes a pl.AtomicType, got {atomic!r}", span)
    kw = {"atomic": AtomicType.Add} if atomic is AtomicType.Add else {}
    return create_op_call("tensor.assemble", [target, source, to_tuple(offset, span, "offset")], kw, span)


def reshape(tensor: Expr, shape: Any, span: Span | None = None) -> Call:
    return create_op_call("tensor.reshape", [tensor, to_tuple(shape, span, "shape")], {}, span)


def transpose(tensor: Expr, axis1: Any, axis2: Any, span: Span | None = None) -> Call:
    return create_op_call("tensor.transpose", [tensor, as_expr(axis1, span), as_expr(axis2, span)], {}, span)
