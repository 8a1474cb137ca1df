"""Slice forms today's PyPTO programs write (spec pypto-jit §6.1): an extent written as
``i * T:(i + 1) * T`` (constant, though not spelled ``i:i + N``: the bounds' difference is worked out
term by term), and slice assignment of a tensor-level result inside a pl.at region (``dst[...] = v``
is ``pl.assemble(dst, v, offsets)``: the region binds v as a task output and the window is assembled
from it when the region ends). Both were strict xfails."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import PyptoError

T = 16


@pl.jit
def scaled_blocks(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    for i in pl.range(x.shape[0] // T):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="scale_block"):
            y[i * T:(i + 1) * T, :] = pl.muls(x[i * T:(i + 1) * T, :], 0.5)


def test_block_extent_written_as_i_times_t_to_i_plus_one_times_t():
    x = np.random.default_rng(62).standard_normal((64, 32)).astype(np.float32)
    y = np.zeros_like(x)
    scaled_blocks(x, y)
    np.testing.assert_allclose(y, x * 0.5, rtol=1e-6)


@pl.jit
def relu_softmax_into_window(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="relu_softmax"):
        y[:, :] = pl.relu(pl.softmax(x))


def test_slice_assignment_of_a_tensor_level_result_in_a_region():
    x = np.random.default_rng(63).standard_normal((37, 130)).astype(np.float32)
    y = np.zeros_like(x)
    relu_softmax_into_window(x, y)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)


@pl.jit
def exp_into_corner(x: pl.Tensor, y: pl.InOut[pl.Tensor]):
    for i in pl.range(2):
        xs = x[i * T:(i + 1) * T, :]
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="exp_block"):
            y[T + i * T:T + (i + 1) * T, 64:128] = pl.exp(xs)


def test_a_tensor_level_result_lands_in_its_window_only():
    x = np.random.default_rng(65).standard_normal((2 * T, 64)).astype(np.float32)
    y = np.full((4 * T, 160), 3.0, np.float32)
    want = y.copy()
    want[T:3 * T, 64:128] = np.exp(x)
    exp_into_corner(x, y)
    np.testing.assert_allclose(y, want, rtol=1e-5)


@pl.jit
def read_after_window_write(x: pl.Tensor, y: pl.InOut[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="late_read"):
        y[0:T, :] = pl.exp(x)
        y = pl.add(y, y)


@pl.jit
def uneven_extent(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    for i in pl.range(2):
        with pl.at(level=pl.Level.CORE_GROUP):
            y[i * T:(i + 1) * T, :] = pl.muls(x[i * T:2 * (i + 1) * T, :], 0.5)


def test_window_writes_that_cannot_be_honoured_are_errors_at_the_line():
    x = np.ones((T, 32), np.float32)
    with pytest.raises(PyptoError, match="uses 'y' after writing a tensor-level value into a window"):
        read_after_window_write(x, np.zeros((2 * T, 32), np.float32))
    with pytest.raises(PyptoError, match=r"test_jit_slice_forms_users_write.py:\d+:\d+: error: a tile slice needs a constant "
                       "extent"):
        uneven_extent(np.ones((4 * T, 32), np.float32), np.zeros((2 * T, 32), np.float32))
