"""Lowering of broadcasting binary tile ops (spec §4.3, §4.6).

Type deduction broadcasts ``[M, N] op [1, N]`` and ``[M, N] op [M, 1]`` (NumPy rules), but the PTO
element-wise instructions (``tadd``, ``tmul``, ...) need operands of one shape: run on a ``[1, N]``
tile they read past its end. The broadcast is therefore made explicit here, with the expand ops:

* an ``[M, 1]`` row vector on the right of add/sub/mul/div becomes ``row_expand_<op>(tile, vec)``;
* a ``[1, N]`` column vector on the right of mul/div/sub becomes ``col_expand_<op>(tile, vec)``;
* a vector on the left of a commutative op (add, mul, maximum, minimum) swaps sides first;
* anything else (``[1, N]`` + ``[M, N]`` add, ``[M, 1] - [1, N]`` outer ops, maximum with a vector)
  expands the vector operand(s) to the full ``[M, N]`` first: a column vector with ``col_expand`` into
  a fresh tile, a row vector with ``row_expand_add`` onto a ``full`` tile of ``-0.0`` (``-0.0 + x`` is
  ``x`` for every float, signed zeros included; integers use 0);
* a ``[1, 1]`` operand is first spread along its row (onto a ``[1, N]`` base), then down the columns;
* a rank-1 ``[N]`` operand is the ``[1, N]`` tile it is stored as (a 1-D tile is one row): it is
  re-viewed as ``[1, N]`` (``reshape``, no data moves) and then handled as above.

Every NumPy broadcast whose result is a static 2-D shape is covered; type deduction rejects the others
(:func:`pypto.ir.type_rules.check_broadcast_lowerable`).

Both ConvertTensorToBlockOps (tensor-level kernels) and the pre-memory normalisation (tile-level
``pl.add(tile, vec)``) use :func:`lower_binary`, so the two levels lower broadcasts the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pypto.enums import MemorySpace
from pypto.ir import expr as E
from pypto.ir.expr import static_int
from pypto.ir.type_rules import BROADCAST_OPS
from pypto.ops import block as B

# Binary tile ops whose operands may broadcast (block.<name>).
BROADCASTING = BROADCAST_OPS
_ROW_EXPAND = {"add": "row_expand_add", "sub": "row_expand_sub", "mul": "row_expand_mul", "div": "row_expand_div"}
_COL_EXPAND = {"sub": "col_expand_sub", "mul": "col_expand_mul", "div": "col_expand_div"}
_COMMUTATIVE = ("add", "mul", "maximum", "minimum")


def vec_kind(shape: tuple, full: tuple) -> str:
    """'full', 'row' ([M, 1] against [M, N]), 'col' ([1, N] against [M, N]) or 'one' ([1, 1] against
    [M, N]) for an operand of rank <= 2 against a 2-D result (a rank-1 shape counts as one row)."""
    if len(full) != 2 or len(shape) > 2:
        return "full"
    shape = (1,) * (2 - len(shape)) + tuple(static_int(d) for d in shape)
    r, c = shape
    fr, fc = static_int(full[0]), static_int(full[1])
    if c == 1 and fc != 1:
        return "one" if r == 1 and fr != 1 else "row"
    if r == 1 and fr != 1:
        return "col"
    return "full"


def needs_lowering(a_shape: tuple, b_shape: tuple, full: tuple) -> bool:
    """Whether a binary op over these 2-D operand shapes broadcasts (needs :func:`lower_binary`)."""
    return vec_kind(a_shape, full) != "full" or vec_kind(b_shape, full) != "full"


def lower_binary(
    op: str, a: Any, b: Any, kinds: tuple[str, str], full: list, let: Callable[[str, E.Call], Any], span: Any
) -> E.Call:
    """The call computing ``block.<op>(a, b)`` with ``a``/``b`` of the given kinds over a ``full`` tile.

    ``let(base, call)`` binds an intermediate call to a new variable (the caller owns naming and
    valid shapes); the returned call is the final operation, left for the caller to bind.
    """
    a, b = as_2d(a, let, span), as_2d(b, let, span)
    ka, kb = kinds
    if ka != "full" and kb == "full" and op in _COMMUTATIVE:
        a, b, ka, kb = b, a, kb, ka
    if ka == "full" and kb == "row" and op in _ROW_EXPAND:
        return getattr(B, _ROW_EXPAND[op])(a, b, span=span)
    if ka == "full" and kb == "col" and op in _COL_EXPAND:
        return getattr(B, _COL_EXPAND[op])(a, b, span=span)
    a = expand(a, ka, full, let, span)
    b = expand(b, kb, full, let, span)
    return getattr(B, op)(a, b, span=span)


def as_2d(v: Any, let: Callable[[str, E.Call], Any], span: Any) -> Any:
    """A rank-1 ``[N]`` tile re-viewed as the ``[1, N]`` tile it is stored as; others unchanged."""
    if len(v.type.shape) != 1:
        return v
    return let("bcast_2d", B.reshape(v, [1, static_int(v.type.shape[0])], span=span))


def expand(v: Any, kind: str, full: list, let: Callable[[str, E.Call], Any], span: Any) -> Any:
    """``v`` broadcast to a ``full`` tile (``v`` itself when it already is one)."""
    if kind == "full":
        return v
    dtype = v.type.dtype
    if kind == "one":
        v = expand(v, "row", [1, full[1]], let, span)
        kind = "col"
    if kind == "col":
        target = let("bcast_dst", B.create_tile(list(full), dtype, MemorySpace.Vec, span=span))
        return let("bcast", B.col_expand(target, v, span=span))
    # -0.0 is the additive identity of IEEE floats (0.0 + -0.0 would give +0.0)
    zero = -0.0 if dtype.is_float() else 0
    base = let("bcast_zero", B.full(list(full), dtype, zero, span=span))
    return let("bcast", B.row_expand_add(base, v, span=span))
