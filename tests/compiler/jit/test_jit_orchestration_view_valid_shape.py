"""``pl.slice(x, shape, offset, valid_shape=..., pad_value=...)`` on an orchestration view (spec
pypto-jit §6.2): it was refused. The view keeps its valid region; loads of its windows in a pl.at region
read only the valid part (a reduction sees only it), and its pad value fills the rest."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import PyptoTypeError


@pl.jit
def valid_row_sum(x: pl.Tensor, y: pl.Out[pl.Tensor], n: int):
    v = pl.slice(x, [16, 32], [0, 0], valid_shape=[16, n])
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(v, [0, 0], [16, 32])
        tmp = pl.create_tile([16, 32], dtype=pl.FP32, target_memory=pl.Mem.Vec)
        y[:, :] = pl.row_sum(pl.fillpad(t, pad_value=0), tmp)


@pl.jit
def valid_subscript_max(x: pl.Tensor, y: pl.Out[pl.Tensor], n: int):
    v = pl.slice(x, [16, 32], [8, 0], valid_shape=[16, n], pad_value=pl.PadValue.min)
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.fillpad(v[:, :], pad_value=pl.PadValue.min)
        tmp = pl.create_tile([16, 32], dtype=pl.FP32, target_memory=pl.Mem.Vec)
        y[:, :] = pl.row_max(t, tmp)


def _x() -> np.ndarray:
    return np.random.default_rng(5).standard_normal((24, 32)).astype(np.float32)


def test_a_view_with_a_valid_shape_loads_only_its_valid_columns():
    x = _x()
    x[:16, 20:] = 100.0  # past the valid columns of n = 20 and 1: must not reach the sum
    for n in (32, 20, 1):
        y = np.zeros((16, 1), np.float32)
        valid_row_sum(x, y, n)
        np.testing.assert_allclose(y, x[:16, :n].sum(1, keepdims=True), rtol=1e-5, atol=1e-5)


def test_a_subscript_of_a_view_with_a_valid_shape_narrows_too():
    x = _x()
    x[8:24, 10:] = 100.0  # past the valid columns: must not reach the max
    y = np.zeros((16, 1), np.float32)
    valid_subscript_max(x, y, 10)
    np.testing.assert_array_equal(y, x[8:24, :10].max(1, keepdims=True))


@pl.jit
def valid_view_into_library_op(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    v = pl.slice(x, [16, 32], [0, 0], valid_shape=[16, 8])
    with pl.at(level=pl.Level.CORE_GROUP):
        y[:, :] = pl.sum(v, axis=-1, keepdim=True)


def test_a_view_with_a_valid_shape_given_to_a_library_op_is_refused_at_the_line():
    line = valid_view_into_library_op.__wrapped__.__code__.co_firstlineno + 4
    with pytest.raises(PyptoTypeError, match=rf"valid_shape.py:{line}:\d+: .*'v' is a view with a valid_shape"):
        valid_view_into_library_op(_x(), np.zeros((16, 1), np.float32))
