"""Tensor ops (DDR level; spec §4). The host-side runtime evaluates them with NumPy."""

from __future__ import annotations

from typing import Any

from pypto.dtype import DataType, promote
from pypto.errors import PyptoTypeError, Span
from pypto.ir.expr import Call, ConstInt, Expr, static_int
from pypto.ir.registry import create_op_call, register_op
from pypto.ir.scalar import as_expr
from pypto.ir.type_rules import broadcast_shapes, int_list, scalar, tensor
from pypto.ir.types import ScalarType, TensorType, shape_str
from pypto.ops.common import scalar_arg, to_tuple

TENSOR = "TensorOp"


@register_op("tensor.create", TENSOR, ("shape",), attrs={"dtype": DataType})
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


@register_op("tensor.view", TENSOR, ("tensor", "shape", "offset"))
def _view(args: list, kw: dict, span: Span) -> TensorType:
    t = tensor("tensor.view", args, 0, ("tensor", "shape", "offset"), span)
    shape = int_list("tensor.view", args[1], "shape", span)
    offs = int_list("tensor.view", args[2], "offset", span)
    if len(shape) != len(t.shape) or len(offs) != len(t.shape):
        raise PyptoTypeError(f"tensor.view: shape and offset need rank {len(t.shape)}", span)
    return TensorType(shape, t.dtype)


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
    return TensorType(t.shape, kw.get("target_type", t.dtype))


@register_op(
    "tensor.matmul",
    TENSOR,
    ("lhs", "rhs"),
    attrs={"out_dtype": DataType, "a_trans": bool, "b_trans": bool, "c_matrix_nz": bool},
)
def _matmul(args: list, kw: dict, span: Span) -> TensorType:
    a, b = tensor("tensor.matmul", args, 0, ("lhs", "rhs"), span), tensor("tensor.matmul", args, 1, ("lhs", "rhs"), span)
    dtype = kw.get("out_dtype") or promote(a.dtype, b.dtype)
    if len(a.shape) != 2 or len(b.shape) != 2:
        raise PyptoTypeError("tensor.matmul: only 2-D operands are supported", span)
    m = a.shape[1] if kw.get("a_trans") else a.shape[0]
    k1 = a.shape[0] if kw.get("a_trans") else a.shape[1]
    k2 = b.shape[1] if kw.get("b_trans") else b.shape[0]
    n = b.shape[0] if kw.get("b_trans") else b.shape[1]
    if None not in (static_int(k1), static_int(k2)) and static_int(k1) != static_int(k2):
        raise PyptoTypeError(f"tensor.matmul: K dims differ: {shape_str(a.shape)} x {shape_str(b.shape)}", span)
    return TensorType((m, n), dtype)


def _row_reduce(name: str):
    def deduce(args: list, kw: dict, span: Span) -> TensorType:
        t = tensor(name, args, 0, ("input",), span)
        return TensorType(t.shape[:-1] + (ConstInt(1, DataType.INDEX),), t.dtype)

    register_op(name, TENSOR, ("input",), attrs={"axis": int, "keep_dim": bool})(deduce)


_row_reduce("tensor.row_max")
_row_reduce("tensor.row_sum")


# ----------------------------------------------------------------------------- builders


def create(shape: Any, dtype: DataType, span: Span | None = None) -> Call:
    return create_op_call("tensor.create", [to_tuple(shape, span, "shape")], {"dtype": dtype}, span)


create_tensor = create


def dim(tensor: Expr, axis: int, span: Span | None = None) -> Call:
    return create_op_call("tensor.dim", [tensor, as_expr(axis, span)], {}, span)


def read(tensor: Expr, indices: Any, span: Span | None = None) -> Call:
    return create_op_call("tensor.read", [tensor, to_tuple(indices, span, "indices")], {}, span)


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
    from pypto.ops.block import _mode

    return create_op_call("tensor.cast", [input], {"target_type": target_type, "mode": _mode(mode, span)}, span)


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


def row_max(input: Expr, span: Span | None = None) -> Call:
    return create_op_call("tensor.row_max", [input], {}, span)


def row_sum(input: Expr, span: Span | None = None) -> Call:
    return create_op_call("tensor.row_sum", [input], {}, span)
