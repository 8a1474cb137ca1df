"""Programs written the way today's PyPTO users write them, filed where the jit front end did not handle
them as the spec (pypto-jit.md) says. A gap still open is a strict xfail naming it; a fixed one is an
ordinary test here or in the file of its subject (test_jit_region_outputs.py,
test_jit_lower_and_argument_dtypes.py)."""

from __future__ import annotations

import numpy as np

import pypto.language as pl


@pl.jit.incore
def copy_rows(a: pl.Tensor, b: pl.Out[pl.Tensor]):
    b[:, :] = pl.adds(a[:, :], 0.0)
    return b


@pl.jit
def copy_by_views(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    for r in pl.range(0, 32, 16):
        copy_rows(x[r:r + 16, :], y[r:r + 16, :])


def test_orchestration_views_passed_to_an_incore_kernel():
    x = np.random.default_rng(22).standard_normal((32, 16)).astype(np.float32)
    y = np.zeros_like(x)
    copy_by_views(x, y)
    np.testing.assert_allclose(y, x)
