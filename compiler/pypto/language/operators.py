"""Python operators on tensors and tiles: ``x + y``, ``x - 1.0``, ``-x``, ``x ** 2``, ``x @ w``, ``x.T``.

The spec leaves Python operators on ``Tensor``/``Tile`` values to the implementation ("may map them to
the unified ops", pypto-language §3); a torch user writes them. Each one is *spelled* here as the
``pl.<op>`` call it means and dispatched exactly as that call would be (:func:`pypto.language.dispatch.pl_call`):
on tensors it is the pypto.lib primitive (defined once, in :mod:`pypto.lib`), on tiles the block op. No
operator has a definition of its own.

Semantics are NumPy's / torch's where they differ from the ``pl.<op>`` spellings:

* a Python number is a *weak* scalar: ``fp16_x + 1.0`` stays FP16 (``pl.add(x, 1.0)`` follows the
  spec's rule that a bare float literal is FP32); a float literal against an integer tensor promotes
  to FP32, as torch does;
* ``a / b`` of two integer operands is true division: both are cast to FP32 first (``pl.div`` on
  integers truncates toward zero);
* ``s - x`` is ``-x + s`` (exact), ``s / x`` is ``reciprocal``-free: ``full(s) / x`` on tiles, and
  the library's ``rdiv_scalar`` on tensors (one rounding, as NumPy's);
* ``x ** n`` for an integer constant ``n`` is ``pl.pow`` (repeated multiplication), ``x ** 0.5`` is
  ``sqrt`` and ``x ** -0.5`` is ``rsqrt``;
* ``x.T`` reverses the axes (NumPy; a 1-D tensor is itself; one ``pl.permute``), ``x.mT`` swaps the
  last two.

What has no meaning here is refused at the operator with what to write instead: ``//``, ``%``, bit
operators and comparisons on tensors (a tensor-level compare would need a boolean tensor; compare
tiles with ``<``/``pl.cmp`` inside a kernel, or use ``pl.maximum`` / ``pl.minimum`` / ``pl.relu``).
"""

from __future__ import annotations

import ast
from typing import Any

from pypto.dtype import DataType
from pypto.enums import CmpType
from pypto.errors import PyptoTypeError
from pypto.ir import expr as E
from pypto.ir.types import ScalarType, TensorType, TileType
from pypto.language import dispatch

# Python operator -> the pl op it spells (same name for tensors and tiles)
ARITH = {"Add": "add", "Sub": "sub", "Mult": "mul", "Div": "div", "MatMult": "matmul"}
COMMUTATIVE = ("Add", "Mult")
COMPARE = {"Eq": CmpType.EQ, "NotEq": CmpType.NE, "Lt": CmpType.LT, "LtE": CmpType.LE, "Gt": CmpType.GT,
           "GtE": CmpType.GE}
# a comparison with the scalar on the left is the mirrored one with it on the right (1 < x is x > 1)
MIRROR = {CmpType.EQ: CmpType.EQ, CmpType.NE: CmpType.NE, CmpType.LT: CmpType.GT, CmpType.LE: CmpType.GE,
          CmpType.GT: CmpType.LT, CmpType.GE: CmpType.LE}
SYMBOL = {"FloorDiv": "//", "Mod": "%", "LShift": "<<", "RShift": ">>", "BitOr": "|", "BitXor": "^",
          "BitAnd": "&", "Pow": "**"}


def is_array(v: Any) -> bool:
    """A tensor or a tile (what the operators here apply to)."""
    return isinstance(getattr(v, "type", None), (TensorType, TileType))


def _is_tensor(v: Any) -> bool:
    return isinstance(getattr(v, "type", None), TensorType)


def _call(p: Any, node: ast.AST, name: str, args: list, kwargs: dict | None = None, top: bool = True) -> Any:
    """``pl.<name>(*args)`` dispatched as the DSL dispatches it; an intermediate (``top=False``) is
    bound to a temporary."""
    value = dispatch.pl_call(p, node, name, None, args, kwargs or {})
    return value if top or not isinstance(value, E.Call) else p.temp(value, node)


def _weak(scalar: Any, like: Any) -> Any:
    """A Python number against ``like``'s dtype, NumPy/torch style: it takes the array's dtype unless
    it is a float against an integer array (then FP32, torch's default float)."""
    if not isinstance(scalar, (int, float)) or isinstance(scalar, bool):
        return scalar
    dtype = like.type.dtype
    if isinstance(scalar, float) and not dtype.is_float():
        return E.ConstFloat(scalar, DataType.FP32)
    return E.ConstFloat(float(scalar), dtype) if dtype.is_float() else E.ConstInt(int(scalar), dtype)


def _int_operand(v: Any) -> bool:
    t = getattr(v, "type", None)
    if isinstance(t, (TensorType, TileType, ScalarType)):
        return t.dtype.is_int() or t.dtype is DataType.INDEX
    return isinstance(v, int) and not isinstance(v, bool)


def _to_float(p: Any, node: ast.AST, v: Any) -> Any:
    if is_array(v):
        return _call(p, node, "cast", [v, DataType.FP32], top=False)
    if isinstance(v, E.Expr):
        return E.cast(v, DataType.FP32, p.span(node))
    return float(v)


def binop(p: Any, node: ast.BinOp, lhs: Any, rhs: Any) -> Any:
    """``lhs <op> rhs`` where at least one side is a tensor or a tile."""
    op = type(node.op).__name__
    if op == "Pow":
        return _power(p, node, lhs, rhs)
    if op not in ARITH:
        raise p.error(f"'{SYMBOL.get(op, op)}' is not supported on tensors/tiles; "
                      + ("use pl.div (integer division truncates toward zero)" if op == "FloorDiv" else
                         "use pl.rem on tiles" if op == "Mod" else "use the pl bit ops (pl.and_, pl.shl, ...) on tiles"),
                      node, PyptoTypeError)
    if op == "MatMult":
        return _call(p, node, "matmul", [lhs, rhs])
    if op == "Div" and _int_operand(lhs) and _int_operand(rhs):  # true division, as NumPy and torch
        lhs, rhs = _to_float(p, node, lhs), _to_float(p, node, rhs)
    if is_array(lhs):
        return _call(p, node, ARITH[op], [lhs, _weak(rhs, lhs)])
    # a scalar on the left
    s = _weak(lhs, rhs)
    if op in COMMUTATIVE:
        return _call(p, node, ARITH[op], [rhs, s])
    if op == "Sub":  # s - x = (-x) + s, exactly
        return _call(p, node, "add", [_call(p, node, "neg", [rhs], top=False), s])
    if _is_tensor(rhs):  # s / x: one division per element (a reciprocal then a multiply rounds twice)
        return _call(p, node, "rdiv_scalar", [rhs, s])
    full = _call(p, node, "full", [[d for d in rhs.type.shape], rhs.type.dtype, s], top=False)
    return _call(p, node, "div", [full, rhs])


def _power(p: Any, node: ast.BinOp, base: Any, exponent: Any) -> Any:
    if not is_array(base) or is_array(exponent):
        raise p.error("'**' needs a tensor base and a constant exponent (x ** 2, x ** 0.5)", node, PyptoTypeError)
    if exponent == 0.5:
        return _call(p, node, "sqrt", [base])
    if exponent == -0.5:
        return _call(p, node, "rsqrt", [base])
    if not isinstance(exponent, int) or isinstance(exponent, bool):
        raise p.error(f"'**' takes an integer constant exponent (or 0.5 / -0.5), got {exponent!r}", node,
                      PyptoTypeError)
    if not _is_tensor(base):
        raise p.error("'**' is a tensor op (pl.pow); on a tile write the multiplications (pl.mul)", node,
                      PyptoTypeError)
    return _call(p, node, "pow", [base, exponent])


def unary(p: Any, node: ast.UnaryOp, v: Any) -> Any:
    """``-x`` is ``pl.neg(x)``, ``+x`` is ``x``; ``~x`` and ``not x`` are refused."""
    if isinstance(node.op, ast.USub):
        return _call(p, node, "neg", [v])
    if isinstance(node.op, ast.UAdd):
        return v
    raise p.error(f"'{'not' if isinstance(node.op, ast.Not) else '~'}' is not supported on tensors/tiles; "
                  "use the pl ops (pl.not_ on tiles)", node, PyptoTypeError)


def compare(p: Any, node: ast.Compare, lhs: Any, rhs: Any) -> Any:
    """``a < b`` on tiles is ``pl.cmp`` / ``pl.cmps``: the predicate mask ``pl.sel`` takes."""
    mode = COMPARE.get(type(node.ops[0]).__name__)
    if mode is None:
        raise p.error(f"'{ast.unparse(node)}': only ==, !=, <, <=, >, >= compare tiles", node, PyptoTypeError)
    if _is_tensor(lhs) or _is_tensor(rhs):
        raise p.error("comparing tensors is not supported (it would need a boolean tensor): compare tiles inside a "
                      "kernel (t > 0 gives the mask pl.sel takes), or use pl.maximum / pl.minimum / pl.relu",
                      node, PyptoTypeError)
    if not is_array(lhs):
        lhs, rhs, mode = rhs, lhs, MIRROR[mode]
    if is_array(rhs):
        return _call(p, node, "cmp", [lhs, rhs], {"cmp_type": int(mode)})
    return _call(p, node, "cmps", [lhs, _weak(rhs, lhs)], {"cmp_type": int(mode)})


def attribute(p: Any, node: ast.Attribute, base: Any) -> Any:
    """``x.T`` (all axes reversed, as NumPy's) and ``x.mT`` (the last two swapped) on a tensor."""
    if not _is_tensor(base):
        raise p.error(f"'.{node.attr}' is a tensor attribute (pl.transpose); tiles are transposed by pl.transpose "
                      "of the tensor they are loaded from", node, PyptoTypeError)
    rank = len(base.type.shape)
    if node.attr == "mT":
        if rank < 2:
            raise p.error(f"'.mT' needs a tensor of rank >= 2, got rank {rank}", node, PyptoTypeError)
        return _call(p, node, "transpose", [base, rank - 2, rank - 1])
    if rank < 2:
        return base
    if rank == 2:  # a swap: tensor.transpose, which a matmul reading it folds into b_trans / a_trans
        return _call(p, node, "transpose", [base, 0, 1])
    return _call(p, node, "permute", [base, list(range(rank - 1, -1, -1))])
