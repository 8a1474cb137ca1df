"""``pl.cast`` of a scalar to an integer with a rounding mode (spec pypto-jit §8: ``pl.cast(x,
target_type, mode="round")`` works on tensors, tiles and scalars; ``round`` is nearest, ties away from
zero). The IR's ``Cast`` converts as C does (a float made an integer truncates toward zero), so the
other modes are written with scalar ops every backend (kernel code, the host interpreter, C++)
already has: ``t = Cast(x)`` (truncated), ``r = x - t`` (the signed fraction, in (-1, 1), exact: ``t``
is ``x`` with its fraction dropped), then a step of one away from ``t`` where the mode says, each a
comparison on ``r`` cast from BOOL to 0 or 1. (``x % 1.0`` would not do: for a negative ``x`` it is
``1 + fmod(x, 1)``, rounded: -0.49999997 % 1.0 is 0.5 in f32.) A scalar cast therefore gives what
the same cast of a tile gives."""

from __future__ import annotations

from pypto.dtype import DataType
from pypto.enums import ROUND_MODES
from pypto.errors import PyptoTypeError, Span
from pypto.ir import expr as E


def cast(x: E.Expr, dtype: DataType, mode: int, span: Span) -> E.Expr:
    """``x`` as ``dtype``, rounded by ``mode`` (a :data:`ROUND_MODES` index) when a float becomes an
    integer; any other conversion is the plain ``Cast`` (exact, or nearest for a narrower float)."""
    name = ROUND_MODES[mode]
    if not E.scalar_dtype(x, span).is_float() or dtype.is_float() or name in ("trunc", "none"):
        return E.cast(x, dtype, span)
    if name == "odd":
        raise PyptoTypeError("pl.cast(mode='odd') rounds a float to a narrower float; to an integer use "
                             "rint, round, floor, ceil or trunc", span)
    t = E.cast(x, dtype, span)
    r = E.sub(x, E.cast(t, E.scalar_dtype(x, span), span), span)

    def step(cond: E.Expr) -> E.Expr:
        return E.cast(cond, dtype, span)

    if name == "floor":
        return E.sub(t, step(E.lt(r, 0.0, span)), span)
    if name == "ceil":
        return E.add(t, step(E.gt(r, 0.0, span)), span)
    if name == "round":  # a tie goes away from zero
        return E.sub(E.add(t, step(E.ge(r, 0.5, span)), span), step(E.le(r, -0.5, span)), span)
    odd = E.ne(E.mod(t, 2, span), 0, span)  # rint: a tie goes to the even neighbour
    up = E.or_(E.gt(r, 0.5, span), E.and_(E.eq(r, 0.5, span), odd, span), span)
    down = E.or_(E.lt(r, -0.5, span), E.and_(E.eq(r, -0.5, span), odd, span), span)
    return E.sub(E.add(t, step(up), span), step(down), span)
