"""Dynamic dims in @pl.jit (spec pypto-jit §3, §2.5): a pl.dynamic extent stays symbolic, so a new extent
reuses the compiled program; static dims still specialize."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import PyptoError

M = pl.dynamic("M")
CHUNK = 16


@pl.jit
def double_rows(x: pl.Tensor[[M, 32], pl.FP32], y: pl.Out[pl.Tensor[[M, 32], pl.FP32]]):
    for r in pl.range(0, x.shape[0], CHUNK):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="double_chunk"):
            y[r:r + CHUNK, :] = pl.muls(x[r:r + CHUNK, :], 2.0)


@pl.jit
def add_one_rows(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    x.bind_dynamic(0, M)
    y.bind_dynamic(0, M)
    for r in pl.range(0, x.shape[0], CHUNK):
        with pl.at(level=pl.Level.CORE_GROUP):
            y[r:r + CHUNK, :] = pl.adds(x[r:r + CHUNK, :], 1.0)


@pytest.mark.parametrize("kernel", [double_rows, add_one_rows])
def test_a_new_extent_reuses_the_compiled_program(kernel):
    rng = np.random.default_rng(3)
    results = []
    for rows in (32, 64):
        x = rng.standard_normal((rows, 32)).astype(np.float32)
        y = np.zeros_like(x)
        kernel(x, y)
        results.append((x, y))
    assert len(kernel._cache) == 1
    for x, y in results:
        want = x * 2 if kernel is double_rows else x + 1
        np.testing.assert_allclose(y, want, rtol=1e-6)
    kernel(np.zeros((32, 16), np.float32), np.zeros((32, 16), np.float32))  # a static dim changed: recompiles
    assert len(kernel._cache) == 2


def test_a_static_dim_mismatch_between_parameters_is_an_error():
    with pytest.raises(PyptoError):
        double_rows(np.zeros((32, 32), np.float32), np.zeros((32, 16), np.float32))
