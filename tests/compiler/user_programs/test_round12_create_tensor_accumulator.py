"""The accumulator pattern of pypto-lib (spec pypto-jit §8: ``acc = pl.create_tensor(...)`` in a
``pl.at`` region, then rebound by ``pl.matmul``; "a scratch value: accept it in any context") in a
region that also holds a vector op, which is split into cube and vector kernels. Red team 12 found
the split refused because of the unread ``tensor.create`` ("it is not split ... because it also holds
the op tensor.create")."""

from __future__ import annotations

import numpy as np

import pypto.language as pl


@pl.jit
def linear_plus(a: pl.Tensor, b: pl.Tensor, d: pl.Tensor, c: pl.Out[pl.Tensor]):
    """c = a @ b + d (a [16, 32], b [32, 32] fp16; d fp32)."""
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="lin"):
        acc = pl.create_tensor([16, 32], dtype=pl.FP32)
        acc = pl.matmul(a, b, out_dtype=pl.FP32)
        c[:, :] = pl.add(acc, d)


def test_an_unread_create_tensor_does_not_keep_a_mixed_region_whole():
    rng = np.random.default_rng(25)
    a, b = rng.standard_normal((2, 32, 32)).astype(np.float16)
    a = a[:16].copy()
    d = rng.standard_normal((16, 32)).astype(np.float32)
    c = np.full((16, 32), np.nan, np.float32)
    linear_plus(a, b, d, c)
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32) + d, rtol=1e-5, atol=1e-3)
