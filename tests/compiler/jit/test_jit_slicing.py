"""Tensor subscripts in jit InCore code: `x[r:r + N, :]` loads a window, `y[...] = t` stores one."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import PyptoError

CHUNK = 16


@pl.jit
def shift_add(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    rows, cols = x.shape
    half = cols // 2
    for r in pl.range(0, rows, CHUNK):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="shift_add_chunk"):
            left = x[r:r + CHUNK, 0:half]
            right = x[r:r + CHUNK, half:]
            y[r:r + CHUNK, 0:half] = pl.add(left, right)
            y[r:r + CHUNK, half:cols] = pl.sub(left, right)


@pl.jit.incore
def first_row_doubled(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    y[0, :] = pl.muls(x[0, :], 2.0)
    return y


@pl.jit
def row_kernel(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    y = first_row_doubled(x, y)
    return y


def test_slices_load_and_store_windows():
    x = np.random.default_rng(6).standard_normal((64, 32)).astype(np.float32)
    y = np.zeros_like(x)
    shift_add(x, y)
    np.testing.assert_allclose(y[:, :16], x[:, :16] + x[:, 16:], rtol=1e-6)
    np.testing.assert_allclose(y[:, 16:], x[:, :16] - x[:, 16:], rtol=1e-6)


def test_scalar_index_keeps_a_unit_row_in_an_incore_function():
    x = np.random.default_rng(7).standard_normal((4, 32)).astype(np.float32)
    y = np.full_like(x, 7.0)
    row_kernel(x, y)
    np.testing.assert_allclose(y[0], x[0] * 2.0, rtol=1e-6)
    np.testing.assert_array_equal(y[1:], 7.0)


@pl.jit
def window_mismatch(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y[0:8, :] = x[0:16, :]


def test_window_shape_mismatch_points_at_the_assignment():
    x = np.ones((16, 16), np.float32)
    with pytest.raises(PyptoError, match=r"test_jit_slicing.py:\d+:\d+: .*does not fit the window") as info:
        window_mismatch(x, np.zeros_like(x))
    line = window_mismatch.__wrapped__.__code__.co_firstlineno + 3
    assert f"test_jit_slicing.py:{line}:" in str(info.value)


@pl.jit
def slice_sum(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        top = pl.slice(x, [8, 16], [0, 0])
        bottom = pl.slice(x, [8, 16], [8, 0])
        y[0:8, :] = pl.add(top, bottom)


def test_pl_slice_is_shape_before_offset():
    x = np.random.default_rng(8).standard_normal((16, 16)).astype(np.float32)
    y = np.zeros((8, 16), np.float32)
    slice_sum(x, y)
    np.testing.assert_allclose(y, x[:8] + x[8:], rtol=1e-6)
