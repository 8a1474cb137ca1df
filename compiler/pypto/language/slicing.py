"""Tensor subscripts in InCore code (spec pypto-jit §6.1): ``x[a:b, c:d]`` loads, ``y[a:b, c:d] = t`` stores.

A slice keeps its axis, a scalar index keeps a unit axis (tiles are at least 2-D, as upstream
promotes them). Extents must be compile-time constants because tiles have static shapes: ``r:r + 32``
(the same start expression plus a constant), ``0:64``, ``:`` and omitted trailing axes all are.
Steps, negative indices, ``...`` and ``None`` are rejected. Outside InCore code (orchestration) a
subscript is a view of the window instead (no copy; a scalar index drops its axis), and slice
assignment assembles a tensor into the window in place.
"""

from __future__ import annotations

import ast
from typing import Any

from pypto.errors import PyptoTypeError
from pypto.ir import expr as E
from pypto.ir.types import TensorType, TileType, static_int
from pypto.ops import tensor as T


def _static(v: Any) -> int | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    return static_int(v) if isinstance(v, E.Expr) else None


def _linear(p: Any, node: ast.AST) -> dict:
    """``node`` as a sum of terms, ``{term: coefficient}`` (term ``""`` is the constant; any other term is
    the ``ast.dump`` of a sub-expression taken as opaque): enough to see that ``(i + 1) * T - i * T``
    is ``T``. Only names, attributes and literals are evaluated (as the subscript itself evaluates them);
    a name with a constant value counts as that constant."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        sign = 1 if isinstance(node.op, ast.Add) else -1
        out = dict(_linear(p, node.left))
        for k, c in _linear(p, node.right).items():
            out[k] = out.get(k, 0) + sign * c
        return out
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return {k: -c for k, c in _linear(p, node.operand).items()}
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        left, right = _linear(p, node.left), _linear(p, node.right)
        for scale, other in ((left, right), (right, left)):
            if set(scale) <= {""}:
                return {k: c * scale.get("", 0) for k, c in other.items()}
    if isinstance(node, (ast.Constant, ast.Name, ast.Attribute)):
        n = _static(p.expr(node))
        if n is not None:
            return {"": n}
    return {ast.dump(node): 1}


def _extent(p: Any, sl: ast.Slice, lower: Any, upper: Any, dim: int | None) -> int:
    """The constant ``upper - lower`` of a slice: from the values, or symbolically from the source
    (``r:r + 32``, ``i * T:(i + 1) * T``), since tiles need a static shape."""
    lo, hi = _static(lower), _static(upper)
    if lo is not None and hi is not None:
        return hi - lo
    if sl.lower is not None and sl.upper is not None:
        diff = _linear(p, sl.upper)
        for k, c in _linear(p, sl.lower).items():
            diff[k] = diff.get(k, 0) - c
        if all(c == 0 for k, c in diff.items() if k != ""):
            return diff.get("", 0)
    raise p.error("a tile slice needs a constant extent (write `i:i + N`, `i * T:(i + 1) * T` or constant "
                  "bounds)", sl)


def window(p: Any, base: E.Expr, index: ast.AST, whole_dynamic: bool = False) -> tuple[list, list]:
    """(offsets, shapes) of ``base[index]``; every axis of ``base`` gets one (missing ones are ``:``).
    ``whole_dynamic``: an open ``:`` of a dynamic axis is the whole axis, its extent the axis's run-time
    size (a tensor-level value written into a tensor; a tile needs a constant extent)."""
    items = list(index.elts) if isinstance(index, ast.Tuple) else [index]
    shape = [static_int(d) for d in base.type.shape]
    if len(items) > len(shape):
        raise p.error(f"{len(items)} indices for a rank-{len(shape)} tensor", index)
    offsets, shapes = [], []
    for axis, dim in enumerate(shape):
        item = items[axis] if axis < len(items) else ast.Slice()
        if isinstance(item, ast.Slice):
            if item.step is not None:
                raise p.error("slices with a step are not supported", item)
            lower = p.expr(item.lower) if item.lower is not None else 0
            if item.upper is None and dim is None and whole_dynamic and item.lower is None:
                offsets.append(0)
                shapes.append(base.type.shape[axis])
                continue
            if item.upper is None:
                if dim is None:
                    raise p.error("an open slice of a dynamic axis has no constant extent", item)
                upper = dim
            else:
                upper = p.expr(item.upper)
            n = _extent(p, item, lower, upper, dim)
            offsets.append(lower)
            shapes.append(n)
        else:
            if isinstance(item, (ast.Constant)) and item.value is Ellipsis:
                raise p.error("'...' is not supported in subscripts", item)
            offsets.append(p.expr(item))
            shapes.append(1)
        lo = _static(offsets[-1])
        if lo is not None and (lo < 0 or (dim is not None and lo + shapes[-1] > dim) or shapes[-1] <= 0):
            raise p.error(f"axis {axis}: window [{lo}, {lo + shapes[-1]}) is outside 0..{dim}", item)
    return offsets, shapes


def is_tensor(value: Any) -> bool:
    return isinstance(value, E.Expr) and isinstance(value.type, TensorType)


def is_tile(value: Any) -> bool:
    return isinstance(value, E.Expr) and isinstance(value.type, TileType)


def _dropped(index: ast.AST, rank: int) -> list[bool]:
    items = list(index.elts) if isinstance(index, ast.Tuple) else [index]
    return [axis < len(items) and not isinstance(items[axis], ast.Slice) for axis in range(rank)]


def view(p: Any, node: ast.AST, base: E.Expr, index: ast.AST, offsets: list, shapes: list) -> E.Expr:
    """``base[index]`` in orchestration: ``tensor.view`` of the window, reshaped without the scalar-indexed
    axes (NumPy rules: ``a[i]`` of a 2-D tensor is 1-D)."""
    span = p.span(node)
    v = p.temp(T.view(base, shapes, offsets, span=span), node)
    drop = _dropped(index, len(shapes))
    if not any(drop):
        return v
    kept = [n for n, d in zip(shapes, drop, strict=True) if not d] or [1]
    return T.reshape(v, kept, span=span)


def assemble(p: Any, node: ast.AST, dst: E.Expr, value: Any, offsets: list, shapes: list, atomic: Any = None) -> E.Call:
    """``dst[window] = value`` in orchestration: ``value`` (a tensor of the window's shape, scalar-indexed
    axes left out or kept as 1) written into ``dst`` in place."""
    if not is_tensor(value):
        raise p.error("outside InCore code the value assigned to a tensor window must be a tensor", node,
                      PyptoTypeError)
    got = [d if static_int(d) is None else static_int(d) for d in value.type.shape]
    kept = [n for n in shapes if n != 1]
    if not _same_dims(got, shapes) and not _same_dims([g for g in got if g != 1], kept):
        raise p.error(f"value of shape {got} does not fit the window of shape {shapes}", node, PyptoTypeError)
    if value.type.dtype is not dst.type.dtype:
        raise p.error(f"the value is {value.type.dtype.name} but the tensor is {dst.type.dtype.name}; convert it "
                      "with pl.cast", node, PyptoTypeError)
    if not _same_dims(got, shapes):
        value = p.temp(T.reshape(value, shapes, span=p.span(node)), node)
    return T.assemble(dst, value, offsets, atomic=atomic, span=p.span(node))


def _same_dims(a: list, b: list) -> bool:
    """Extents equal: the same constants, or the same run-time size (one dynamic dimension)."""
    return len(a) == len(b) and all(x is y or (isinstance(x, int) and isinstance(y, int) and x == y)
                                    for x, y in zip(a, b, strict=True))
