"""Transposes of more than two axes (issue 12, lib12b item 3): ``pl.permute(x, axes)`` /
``pl.transpose(x, axes)`` / ``pl.transpose(x)`` are NumPy's ``np.transpose(x, axes)`` for any
permutation of any rank (pypto.lib.layout.permute: a strided copy, tile transposes, or both through a
workspace); checked against NumPy over shapes with dims 1, primes and more than one tile, and dtypes."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lib_programs import NP, data, program

import pypto.language as pl
from pypto import DataType
from pypto.errors import PyptoError
from pypto.ir.compiler import compile_program
from pypto.lib import ops as L
from pypto.runtime import run

F32, F16 = DataType.FP32, DataType.FP16


@settings(max_examples=8, deadline=None)
@given(data_=st.data(), rank=st.sampled_from([3, 4]), dtype=st.sampled_from([F32, F16]))
def test_any_permutation_matches_numpy(data_, rank, dtype):
    shape = tuple(data_.draw(st.sampled_from([1, 2, 3, 7, 16, 37])) for _ in range(rank))
    perm = data_.draw(st.permutations(range(rank)))
    x = data(shape, dtype, sum(shape))
    got = run(program(lambda t: L.permute(t, list(perm)), [("x", shape, dtype)]), x).outputs[0]
    np.testing.assert_array_equal(got, np.transpose(x, perm))


@pytest.mark.parametrize("perm", [(1, 0, 2), (0, 2, 1), (2, 0, 1)])  # a strided copy, tile transposes, both
def test_a_3d_tensor_larger_than_a_tile(perm):
    shape = (3, 130, 70)  # 130 x 70 fp32 slices: several square transpose blocks, ragged tails
    x = data(shape, F32, 1)
    got = run(program(lambda t: L.permute(t, list(perm)), [("x", shape, F32)]), x).outputs[0]
    np.testing.assert_array_equal(got, np.transpose(x, perm))


@pl.jit
def rotate_axes(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y = pl.transpose(x, (2, 0, 1))
    return y


@pl.jit
def reverse_axes(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y = pl.transpose(x)
    return y


@pl.jit
def permute_axes(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y = pl.permute(x, [1, 3, 0, 2])
    return y


def test_the_spellings_a_numpy_or_torch_user_writes():
    x = np.arange(2 * 3 * 4 * 8, dtype=np.float32).reshape(2, 3, 4, 8)
    x3 = x[0]
    y = np.zeros(np.transpose(x3, (2, 0, 1)).shape, np.float32)
    rotate_axes(x3, y)
    np.testing.assert_array_equal(y, np.transpose(x3, (2, 0, 1)))
    y = np.zeros(x.T.shape, np.float32)
    reverse_axes(x, y)
    np.testing.assert_array_equal(y, x.T)
    y = np.zeros(np.transpose(x, (1, 3, 0, 2)).shape, np.float32)
    permute_axes(x, y)
    np.testing.assert_array_equal(y, np.transpose(x, (1, 3, 0, 2)))


@pytest.mark.parametrize("axes", [[0, 1], [0, 0, 1], [0, 1, 3]])
def test_an_axes_list_that_is_not_a_permutation_is_refused(axes):
    with pytest.raises(PyptoError, match=r"tensor.permute: axes .* are not a permutation of the 3 axes"):
        compile_program(program(lambda t: L.permute(t, axes), [("x", (2, 3, 4), F32)]))


def test_bf16_permute():
    shape = (5, 16, 3)
    x = data(shape, DataType.BF16, 2)
    got = run(program(lambda t: L.permute(t, [2, 0, 1]), [("x", shape, DataType.BF16)]), x).outputs[0]
    np.testing.assert_array_equal(got.astype(np.float32), np.transpose(x, (2, 0, 1)).astype(np.float32))
    assert got.dtype == NP[DataType.BF16]
