"""``pl.concat(a, b)`` of two tensors joins columns (the last axis), as spec pypto-jit §6.5 says and as the
tile form (``tconcat``) does; it joined rows (red team round 4). The seed documents say nothing of the
default, so the @pl.program form follows the same rule; ``axis=0`` joins rows (torch's ``cat``)."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import PyptoError
from pypto.runtime import run


@pl.jit
def join(a: pl.Tensor, b: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="join"):
        y[:, :] = pl.concat(a, b)


@pl.jit
def join_rows(a: pl.Tensor, b: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="join_rows"):
        y[:, :] = pl.concat(a, b, axis=0)


@pl.program
class JoinInCore:
    @pl.function(type=pl.FunctionType.InCore)
    def kern(self, a: pl.Tensor[[5, 7], pl.FP32], b: pl.Tensor[[5, 3], pl.FP32]) -> pl.Tensor[[5, 10], pl.FP32]:
        c = pl.concat(a, b)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[5, 7], pl.FP32], b: pl.Tensor[[5, 3], pl.FP32]) -> pl.Tensor[[5, 10], pl.FP32]:
        c = self.kern(a, b)
        return c


def _pair(rows_a: int, cols_a: int, rows_b: int, cols_b: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(3)
    return (rng.standard_normal((rows_a, cols_a)).astype(np.float32),
            rng.standard_normal((rows_b, cols_b)).astype(np.float32))


def test_jit_tensor_concat_joins_columns_by_default():
    a, b = _pair(5, 7, 5, 3)
    y = np.zeros((5, 10), np.float32)
    join(a, b, y)
    np.testing.assert_array_equal(y, np.concatenate([a, b], axis=1))


def test_jit_tensor_concat_axis_0_joins_rows():
    a, b = _pair(4, 6, 3, 6)
    y = np.zeros((7, 6), np.float32)
    join_rows(a, b, y)
    np.testing.assert_array_equal(y, np.concatenate([a, b], axis=0))


def test_jit_tensor_concat_of_different_row_counts_is_refused_by_default():
    a, b = _pair(4, 6, 3, 6)
    with pytest.raises(PyptoError, match="differ off axis 1"):
        join(a, b, np.zeros((7, 6), np.float32))


def test_program_tensor_concat_joins_columns_by_default():
    a, b = _pair(5, 7, 5, 3)
    got = run(JoinInCore, a, b).outputs[0]
    np.testing.assert_array_equal(got, np.concatenate([a, b], axis=1))
