"""Matrix multiply (§4.8): tmatmul / .acc / .bias and tgemv / .acc / .bias.

``M = a.VR``, ``K = a.VC``, ``N = b.VC``. Accumulation in the acc dtype in increasing k: f32 acc
uses fused multiply-add per step (exact product, one rounding per step); integer products are summed
in i32 (wrapping). The result covers ``c[:M, :N]``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pyptoemu.isa.arg import Arg
from pyptoemu.isa.ieee import QUIET
from pyptoemu.isa.semantics.common import F64, finish, region
from pyptoemu.isa.semantics.registry import semantics


def _product(init: np.ndarray, a: Arg, b: Arg, acc: Arg) -> np.ndarray:
    m, k, n = a.vrow, a.vcol, b.vcol
    x = region(a, m, k)
    y = region(b, k, n)
    if acc.dtype.kind in "iu":
        total = init.astype(np.int64) + x.astype(np.int64) @ y.astype(np.int64)
        return finish(total, acc.dtype_name)
    xd, yd = x.astype(F64), y.astype(F64)
    c = init.astype(acc.dtype)
    for kk in range(k):
        c = _fma_step(c, np.multiply.outer(xd[:, kk], yd[kk, :]), acc.dtype)
    return np.ascontiguousarray(c)


def _fma_step(c: np.ndarray, p: np.ndarray, dt: np.dtype) -> np.ndarray:
    """``c + p`` rounded ONCE to ``dt`` (a fused multiply-add; ``p`` is an exact f64 product).

    The f64 sum ``s`` may itself be rounded; rounding it again to ``dt`` then differs from one
    rounding of the exact sum only when ``s`` lands exactly halfway between two ``dt`` values.
    TwoSum gives the exact error ``e`` of ``s``; at such a tie the sign of ``e`` picks the side.
    """
    cd = c.astype(F64)
    with QUIET:
        s = cd + p
        bp = s - cd
        e = (cd - (s - bp)) + (p - bp)  # exact: cd + p == s + e
        y = s.astype(dt)
        yd = y.astype(F64)
        other = np.where(yd <= s, np.nextafter(y, dt.type(np.inf)), np.nextafter(y, dt.type(-np.inf)))
        tie = np.isfinite(s) & (e != 0) & (np.abs(s - yd) == np.abs(other.astype(F64) - s))
        toward = np.where(e > 0, np.maximum(y, other), np.minimum(y, other))
    return np.where(tie, toward, y).astype(dt)


@semantics("matmul")
def matmul(ins: list[Arg], outs: list[Arg], attrs: dict[str, Any]) -> list[np.ndarray | None]:
    """c = a @ b (tmatmul, tgemv)."""
    a, b, c = ins[0], ins[1], outs[0]
    return [_product(np.zeros((a.vrow, b.vcol), c.dtype), a, b, c)]


@semantics("matmul_acc")
def matmul_acc(ins: list[Arg], outs: list[Arg], attrs: dict[str, Any]) -> list[np.ndarray | None]:
    """c = c0 + a @ b; ins (c0, a, b)."""
    c0, a, b, c = ins[0], ins[1], ins[2], outs[0]
    return [_product(region(c0, a.vrow, b.vcol), a, b, c)]


@semantics("matmul_bias")
def matmul_bias(ins: list[Arg], outs: list[Arg], attrs: dict[str, Any]) -> list[np.ndarray | None]:
    """c = a @ b + bias[0, j]; ins (a, b, bias); the accumulator starts from the bias row."""
    a, b, bias, c = ins[0], ins[1], ins[2], outs[0]
    init = np.broadcast_to(region(bias, 1, b.vcol), (a.vrow, b.vcol))
    return [_product(np.asarray(init), a, b, c)]
