"""A reshape of a kernel's read-only argument reads a second GM view of its bytes with the result's
shape (``tensor.as_shape``: another make_tensor_view of the same pointer) and copies block by block
(issue 12, lib12b item 4: (2, 2, 9000) -> (9000, 4) moved 9000 runs of 4 elements). Checked against
NumPy over shapes whose rows differ (1, primes, a row wider than a tile) and dtypes; a reshape of an
intermediate (not an argument) keeps the on-chip paths."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lib_programs import NP, data, program

from pypto import DataType
from pypto.ir.compiler import compile_program
from pypto.ops import tensor as T
from pypto.runtime import run

F32, F16, BF16 = DataType.FP32, DataType.FP16, DataType.BF16
PAIRS = [((2, 2, 9000), (9000, 4)), ((9000, 4), (2, 2, 9000)), ((37, 130), (130, 37)), ((6, 10), (4, 15)),
         ((7,), (7, 1)), ((1, 1), (1,)), ((3, 5, 7), (7, 15)), ((13, 3000), (3000, 13))]


@settings(max_examples=10, deadline=None)
@given(pair=st.sampled_from(PAIRS), dtype=st.sampled_from([F32, F16, BF16]))
def test_reshapes_of_an_argument_match_numpy(pair, dtype):
    src, dst = pair
    x = data(src, dtype, len(src))
    got = run(program(lambda t: T.reshape(t, list(dst)), [("x", src, dtype)]), x).outputs[0]
    np.testing.assert_array_equal(got, x.reshape(dst).astype(NP[dtype]))


def test_the_argument_is_viewed_not_copied_in_runs():
    """(2, 2, 9000) -> (9000, 4): a second tensor view of the argument, no loop over 9000 runs."""
    compiled = compile_program(program(lambda t: T.reshape(t, [9000, 4]), [("x", (2, 2, 9000), F32)]),
                               with_cpp=False)
    text = compiled.pto["kern"]
    assert text.count("pto.make_tensor_view %arg0") == 2
    assert "c9000 step %c1" not in text and text.count("pto.tload") <= 4


def _with_builder(fn):
    fn.with_builder = True
    return fn


@_with_builder
def _exp_then_reshape(ib, x):
    return T.reshape(ib.let("e", T.exp(x)), [10, 6])


def test_a_reshape_of_an_intermediate_is_not_a_view():
    """exp(x) is written by the kernel: its reshape reads it back through the tile paths (a view of
    a buffer the kernel writes would need its own ordering against the writes)."""
    x = data((6, 10), F32, 3)
    prog = program(_exp_then_reshape, [("x", (6, 10), F32)])
    np.testing.assert_allclose(run(prog, x).outputs[0], np.exp(x).reshape(10, 6), rtol=1e-6)
    assert "tensor.as_shape" not in str(compile_program(prog, with_cpp=False).program)


@pytest.mark.parametrize("src,dst", [((4, 3, 16), (2, 96)), ((2, 3, 64), (6, 2, 32))])
def test_n_d_results_still_match(src, dst):
    x = data(src, F32, 5)
    got = run(program(lambda t: T.reshape(t, list(dst)), [("x", src, F32)]), x).outputs[0]
    np.testing.assert_array_equal(got, x.reshape(dst))
