"""pypto.lib layout primitives on the emulator against NumPy: broadcast_to, slice, concat, transpose
(copies through tiles with moved windows; ragged shapes and tails)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lib_programs import data, program

from pypto import DataType
from pypto.lib import ops as L
from pypto.ops import tensor as T
from pypto.runtime import run

F32, F16 = DataType.FP32, DataType.FP16


def _run(build, arrays, dtype=F32):
    params = [(f"x{i}", a.shape, dtype) for i, a in enumerate(arrays)]
    return run(program(build, params), *arrays).outputs[0]


@pytest.mark.parametrize("src,dst", [((1, 70), (37, 70)), ((37, 1), (37, 70)), ((1, 1), (5, 9)), ((70,), (3, 70)),
                                     ((1,), (13,))])
def test_broadcast_to(src, dst):
    x = data(src, F32, 1)
    np.testing.assert_array_equal(_run(lambda a: L.broadcast_to(a, list(dst)), [x]), np.broadcast_to(x, dst))


@pytest.mark.parametrize("shape,size,offset", [((300, 1030), (37, 500), (101, 7)), ((9, 9), (1, 9), (8, 0)),
                                               ((1000,), (333,), (17,))])
def test_slice(shape, size, offset):
    x = data(shape, F16, 2)
    got = _run(lambda a: L.slice(a, list(size), list(offset)), [x], F16)
    want = x[tuple(np.s_[o:o + n] for o, n in zip(offset, size, strict=True))]
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("a,b,axis", [((37, 70), (5, 70), 0), ((37, 70), (37, 33), 1), ((13,), (200,), 0)])
def test_concat(a, b, axis):
    x, y = data(a, F32, 3), data(b, F32, 4)
    params = [("x", a, F32), ("y", b, F32)]
    got = run(program(lambda p, q: L.concat(p, q, axis), params), x, y).outputs[0]
    np.testing.assert_array_equal(got, np.concatenate([x, y], axis))


@pytest.mark.parametrize("shape", [(8, 8), (37, 70), (1, 13), (130, 3)])
def test_transpose(shape):
    x = data(shape, F32, 5)
    np.testing.assert_array_equal(_run(lambda a: T.transpose(a, 0, 1), [x]), x.T)


@pytest.mark.parametrize("src,dst", [((37, 64), (74, 32)), ((74, 32), (37, 64)), ((512,), (16, 32)), ((16, 32), (512,)),
                                     ((30, 40), (30, 40))])
def test_reshape(src, dst):
    x = data(src, F32, 6)
    np.testing.assert_array_equal(_run(lambda a: T.reshape(a, list(dst)), [x]), x.reshape(dst))


def _factor(total: int, parts: list[int]) -> tuple:
    """``total`` as a shape: each drawn part taken while it divides what is left, the rest last."""
    dims = []
    for p in parts:
        if total % p == 0 and p > 1:
            dims.append(p)
            total //= p
    return (*dims, total)


@settings(max_examples=10, deadline=None)
@given(src=st.lists(st.sampled_from([1, 2, 3, 5, 7, 8, 12]), min_size=1, max_size=4).map(tuple),
       parts=st.lists(st.sampled_from([2, 3, 4, 5, 6, 7, 9]), max_size=3))
def test_any_order_preserving_reshape_matches_numpy(src, parts):
    """Any ranks, rows that neither divide each other nor fill 32-byte units (runs of gcd elements)."""
    dst = _factor(int(np.prod(src)), parts)
    x = data(src, F32, len(src))
    np.testing.assert_array_equal(_run(lambda a: T.reshape(a, list(dst)), [x]), x.reshape(dst))


@pytest.mark.parametrize("src,dst", [((5, 6), (6, 5)), ((3, 4, 10), (12, 10)), ((2, 3, 5), (5, 3, 2)), ((7,), (7, 1)),
                                     ((2, 9000), (4, 4500)), ((3, 2, 20000), (2, 60000))])
def test_reshape_beyond_whole_rows(src, dst):
    """(5, 6) -> (6, 5) was refused (not by whole rows); N-D; runs longer than a tile (in pieces)."""
    x = data(src, F32, 9)
    np.testing.assert_array_equal(_run(lambda a: T.reshape(a, list(dst)), [x]), x.reshape(dst))


_DIMS = st.sampled_from([1, 2, 3, 5, 7, 13, 37])


@settings(max_examples=12, deadline=None)
@given(shape=st.lists(_DIMS, min_size=3, max_size=4).map(tuple), data_=st.data())
def test_nd_transpose_of_any_two_axes_matches_numpy(shape, data_):
    """Rank 3-4, any pair: the last axis kept (strided copy), made the rows (tile transpose), or moved
    elsewhere (both, through a workspace)."""
    i, j = data_.draw(st.lists(st.integers(0, len(shape) - 1), min_size=2, max_size=2, unique=True))
    x = data(shape, F32, len(shape))
    np.testing.assert_array_equal(_run(lambda a: T.transpose(a, i, j), [x]), np.swapaxes(x, i, j))


@pytest.mark.parametrize("shape,i,j,dtype", [((3, 2, 9000), 0, 1, F32), ((2, 37, 300), 1, 2, F16),
                                             ((40, 3, 70), 0, 2, F32)])
def test_nd_transpose_larger_than_a_buffer(shape, i, j, dtype):
    x = data(shape, dtype, 7)
    np.testing.assert_array_equal(_run(lambda a: T.transpose(a, i, j), [x], dtype), np.swapaxes(x, i, j))


@settings(max_examples=10, deadline=None)
@given(shape=st.lists(_DIMS, min_size=3, max_size=4).map(tuple), data_=st.data())
def test_nd_slice_matches_numpy(shape, data_):
    offs = [data_.draw(st.integers(0, d - 1)) for d in shape]
    size = [data_.draw(st.integers(1, d - o)) for d, o in zip(shape, offs, strict=True)]
    x = data(shape, F16, 11)
    got = _run(lambda a: L.slice(a, size, offs), [x], F16)
    np.testing.assert_array_equal(got, x[tuple(np.s_[o:o + n] for o, n in zip(offs, size, strict=True))])


@settings(max_examples=10, deadline=None)
@given(shape=st.lists(_DIMS, min_size=3, max_size=4).map(tuple), extra=_DIMS, data_=st.data())
def test_nd_concat_matches_numpy(shape, extra, data_):
    axis = data_.draw(st.integers(0, len(shape) - 1))
    other = tuple(extra if k == axis else d for k, d in enumerate(shape))
    x, y = data(shape, F32, 12), data(other, F32, 13)
    params = [("x", shape, F32), ("y", other, F32)]
    got = run(program(lambda p, q: L.concat(p, q, axis), params), x, y).outputs[0]
    np.testing.assert_array_equal(got, np.concatenate([x, y], axis))


def test_large_nd_slice_and_concat():
    """Windows larger than a buffer along the last axis, leading dims looped over."""
    x = data((2, 3, 9000), F32, 14)
    np.testing.assert_array_equal(_run(lambda a: L.slice(a, [2, 2, 8000], [0, 1, 999]), [x]), x[:, 1:3, 999:8999])
    y = data((2, 1, 9000), F32, 15)
    params = [("x", (2, 3, 9000), F32), ("y", (2, 1, 9000), F32)]
    got = run(program(lambda p, q: L.concat(p, q, 1), params), x, y).outputs[0]
    np.testing.assert_array_equal(got, np.concatenate([x, y], 1))


@pytest.mark.parametrize("src,dst,dtype", [((2, 20000), (4, 10000), F32), ((4, 10000), (2, 20000), F32),
                                           ((1, 30000), (3, 10000), F16), ((3, 9000), (27000,), F32)])
def test_reshape_of_rows_wider_than_a_tile(src, dst, dtype):
    """Was refused ('a row of N elements does not fit a tile'): runs of the narrower row, in tile-wide pieces."""
    x = data(src, dtype, 16)
    np.testing.assert_array_equal(_run(lambda a: T.reshape(a, list(dst)), [x], dtype), x.reshape(dst))


@settings(max_examples=10, deadline=None)
@given(rows=st.lists(st.sampled_from([1, 2, 3, 4, 5, 6, 7, 37]), min_size=1, max_size=3),
       parts=st.lists(st.sampled_from([2, 3, 4, 5, 6, 7]), max_size=3), last=st.sampled_from([1, 7, 64, 130]))
def test_reshape_keeping_the_last_dim_moves_boxes_of_rows(rows, parts, last):
    """Equal last dims: runs of several whole rows that are one box of both shapes."""
    src = (*rows, last)
    dst = (*_factor(int(np.prod(rows)), parts), last)
    x = data(src, F32, 17)
    np.testing.assert_array_equal(_run(lambda a: T.reshape(a, list(dst)), [x]), x.reshape(dst))


@pytest.mark.parametrize("src,dst", [((2, 3, 64), (3, 128)), ((3, 128), (2, 3, 64)), ((2, 3, 64), (6, 2, 32)),
                                     ((4, 3, 16), (2, 96)), ((5, 2, 8), (2, 5, 8)), ((3, 1, 40), (2, 60))])
def test_reshape_moves_boxes_of_rows_of_different_lengths(src, dst):
    """Rows of whole 32-byte units whose lengths differ: runs of several rows of both shapes."""
    x = data(src, F32, 18)
    np.testing.assert_array_equal(_run(lambda a: T.reshape(a, list(dst)), [x]), x.reshape(dst))
