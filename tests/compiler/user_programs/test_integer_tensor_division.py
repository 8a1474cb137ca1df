"""Integer tensor division (pl.div on INT32 tensors, INT32 result by the seed-004 promotion rules)
truncates toward zero, like the tile-scalar form and A5's integer tdiv. On A2/A3 the library computes
it in FP32 (no integer tdiv) and casts back with mode "trunc"; the default rounding gave 7 / 2 = 4."""

from __future__ import annotations

import numpy as np

import pypto.language as pl


@pl.jit
def divide(a: pl.Tensor, b: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y = pl.div(a, b)
    return y


@pl.jit
def halve(a: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y = pl.div(a, 2)
    return y


A = np.array([[7, -7, 7, -7, 1, -1, 0, 9]], np.int32)


def test_integer_tensor_by_scalar_truncates():
    y = np.zeros_like(A)
    halve(A, y)
    np.testing.assert_array_equal(y, [[3, -3, 3, -3, 0, 0, 0, 4]])


def test_integer_tensor_by_tensor_truncates():
    b = np.array([[2, 2, -2, -2, 3, 3, 5, 3]], np.int32)
    y = np.zeros_like(A)
    divide(A, b, y)
    np.testing.assert_array_equal(y, [[3, -3, -3, 3, 0, 0, 0, 3]])


def test_integer_tensor_by_row_vector_truncates():
    b = np.array([[2], [-3]], np.int32)
    a = np.array([[7, -7, 8, 1], [7, -7, 9, 2]], np.int32)
    y = np.zeros_like(a)
    divide(a, b, y)
    np.testing.assert_array_equal(y, np.trunc(a / b).astype(np.int32))
