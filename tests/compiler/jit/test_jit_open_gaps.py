"""Programs written the way today's PyPTO users write them that the jit front end does not yet handle
as the spec (pypto-jit.md) says. Each is a strict xfail naming the gap; the fix belongs to code
another helper is changing (jit.py, placement.py, slicing.py), so it is recorded here instead."""

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
