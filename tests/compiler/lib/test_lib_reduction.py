"""pypto.lib reductions on the emulator against NumPy: sum/max/min/mean over the last axis, the
first axis and both, keepdim or not, any axes of 3-D/4-D tensors (keepdim), tails padded with the reduction's identity, and rows or
columns longer than one tile (the two-level loop)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lib_programs import close, data, program

from pypto import DataType
from pypto.lib import ops as L
from pypto.runtime import run

F32, F16, BF16 = DataType.FP32, DataType.FP16, DataType.BF16
REF = {"sum": np.sum, "max": np.max, "min": np.min, "mean": np.mean}


def _case(name, shape, axis, keepdim, dtype, seed):
    x = data(shape, dtype, seed)
    prog = program(lambda a: getattr(L, name)(a, axis, keepdim=keepdim), [("x", shape, dtype)])
    got = run(prog, x).outputs[0]
    want = REF[name](x.astype(np.float64), axis=axis, keepdims=keepdim)
    n = np.prod([shape[a] for a in (axis if isinstance(axis, tuple) else (axis,))])
    # a sum's error grows with the count it adds (the emulator accumulates f16/bf16 in f32)
    atol = {F32: 1e-5, F16: 2e-3, BF16: 1.6e-2}[dtype] * (np.sqrt(n) if name in ("sum",) else 1) * 2
    close(got, want, dtype, atol=atol)


@settings(max_examples=16)
@given(name=st.sampled_from(sorted(REF)), rows=st.sampled_from([1, 3, 8, 37, 100]),
       cols=st.sampled_from([1, 5, 16, 130]), axis=st.sampled_from([0, 1, -1, (0, 1)]),
       keepdim=st.booleans(), dtype=st.sampled_from([F32, F16, BF16]))
def test_reduction_matches_numpy(name, rows, cols, axis, keepdim, dtype):
    if axis == (0, 1):
        keepdim = True  # a kernel writes a tensor: every axis reduced needs keepdim
    _case(name, (rows, cols), axis, keepdim, dtype, rows + cols)


@pytest.mark.parametrize("name,shape,axis", [
    ("max", (37, 6000), -1),     # rows wider than a tile: two-level loop over column chunks
    ("sum", (3, 100000), 1),
    ("min", (20000, 3), 0),      # columns taller than a tile: two-level loop over row chunks
    ("mean", (301, 257), (0, 1)),
])
def test_reduction_larger_than_a_buffer(name, shape, axis):
    _case(name, shape, axis, True, F32, 7)


def test_all_axes_without_keepdim_is_refused():
    from pypto.errors import CompileError
    prog = program(lambda a: L.sum(a, (0, 1)), [("x", (4, 8), F32)])
    with pytest.raises(CompileError, match="keepdim=True"):
        run(prog, data((4, 8), F32, 0))


@pytest.mark.parametrize("keepdim", [True, False])
def test_reduction_of_a_3d_tensor_over_its_last_axis(keepdim):
    _case("sum", (3, 17, 90), -1, keepdim, F32, 3)


ND_DIMS = st.sampled_from([1, 2, 3, 7, 37])


@settings(max_examples=8, deadline=None)
@given(name=st.sampled_from(sorted(REF)), shape=st.lists(ND_DIMS, min_size=3, max_size=4).map(tuple),
       data_=st.data())
def test_nd_reduction_over_any_axes_matches_numpy(name, shape, data_):
    """3-D and 4-D tensors (extents 1, primes, a tile-sized 37) over any non-empty set of axes, keepdim."""
    axes = tuple(sorted(data_.draw(st.sets(st.integers(0, len(shape) - 1), min_size=1), label="axes")))
    _case(name, shape, axes, True, F32, sum(shape))


@pytest.mark.parametrize("name,shape,axis", [
    ("sum", (2, 3, 9000), (1,)),      # a middle axis of rows wider than a tile (column chunks)
    ("max", (5, 40, 3, 130), (0, 2)),  # two outer axes: combined block by block, then the column reduction
    ("mean", (3, 700, 40), (0, 1)),   # columns taller than a tile after the outer axis is combined
])
def test_nd_reduction_larger_than_a_buffer(name, shape, axis):
    _case(name, shape, axis, True, F32, 11)


@settings(max_examples=6, deadline=None)
@given(name=st.sampled_from(sorted(REF)), shape=st.lists(ND_DIMS, min_size=3, max_size=4).map(tuple),
       data_=st.data())
def test_nd_reduction_over_other_axes_without_keepdim_matches_numpy(name, shape, data_):
    """Was refused ('pass keepdim=True'): reduced with keepdim into a workspace, then reshaped."""
    rank = len(shape)
    axes = tuple(sorted(data_.draw(st.sets(st.integers(0, rank - 1), min_size=1, max_size=rank - 1), label="axes")))
    _case(name, shape, axes, False, F32, sum(shape) + 1)


def test_nd_reduction_over_every_axis_without_keepdim_is_refused():
    from pypto.errors import CompileError
    prog = program(lambda a: L.sum(a, (0, 1, 2)), [("x", (2, 3, 4), F32)])
    with pytest.raises(CompileError, match="keepdim=True"):
        run(prog, data((2, 3, 4), F32, 0))
