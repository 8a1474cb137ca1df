"""Matrix multiply (§4.8): tmatmul / .acc / .bias and tgemv / .acc / .bias.

``M = a.VR``, ``K = a.VC``, ``N = b.VC``. Accumulation in the acc dtype in increasing k: f32 acc
uses fused multiply-add per step (exact product, one rounding per step); integer products are summed
in i32 (wrapping). The result covers ``c[:M, :N]``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pyptoemu.isa.arg import Arg
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
        # one FMA step: the product of two <= f32 values is exact in f64; round once to acc dtype
        c = (c.astype(F64) + np.multiply.outer(xd[:, kk], yd[kk, :])).astype(acc.dtype)
    return np.ascontiguousarray(c)


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
