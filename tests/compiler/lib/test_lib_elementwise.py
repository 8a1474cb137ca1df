"""pypto.lib element-wise primitives on the emulator against NumPy: any 1-D/2-D shape (1, primes,
wider than one tile), f32/f16/bf16, NumPy broadcasting and scalar operands."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lib_programs import NP, close, data, program

from pypto import DataType
from pypto.lib import ops as L
from pypto.ops import tensor as T
from pypto.runtime import run

F32, F16, BF16 = DataType.FP32, DataType.FP16, DataType.BF16
DTYPES = [F32, F16, BF16]


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _gelu(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))


# name -> (NumPy reference, input range)
UNARY = {
    "exp": (np.exp, (-2, 2)), "neg": (np.negative, (-2, 2)), "sqrt": (np.sqrt, (0.1, 4)),
    "rsqrt": (lambda x: 1 / np.sqrt(x), (0.1, 4)), "reciprocal": (lambda x: 1 / x, (0.5, 4)),
    "log": (np.log, (0.1, 4)), "abs": (np.abs, (-2, 2)), "relu": (lambda x: np.maximum(x, 0), (-2, 2)),
    "sigmoid": (_sigmoid, (-6, 6)), "tanh": (np.tanh, (-4, 4)), "silu": (lambda x: x * _sigmoid(x), (-6, 6)),
    "gelu": (_gelu, (-4, 4)),
}
BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide, "maximum": np.maximum,
          "minimum": np.minimum}
SHAPES = [(1,), (7,), (1, 1), (1, 13), (13, 1), (5, 37), (40, 130), (300, 1030)]
SIDE = st.sampled_from([1, 3, 8, 37, 100])


def op(name):
    """The builder ``pl.<name>`` reaches on tensors (a library op, or an older tensor op)."""
    return L.BUILDERS.get(name) or getattr(T, name)


def _run(build, arrays, dtypes):
    params = [(f"x{i}", a.shape, d) for i, (a, d) in enumerate(zip(arrays, dtypes, strict=True))]
    return run(program(build, params), *arrays).outputs[0]


def _unary_case(name, shape, dtype, seed):
    ref, (lo, hi) = UNARY[name]
    x = data(shape, dtype, seed, lo, hi)
    got = _run(lambda a: op(name)(a), [x], [dtype])
    want = ref(x.astype(np.float64))
    # sigmoid/tanh/silu/gelu are composed of exp, recip and adds: an absolute error of a few ulps of 1
    close(got, want, dtype, atol=4 * np.finfo(NP[dtype]).eps if dtype is not BF16 else 3e-2)


@settings(max_examples=12)
@given(name=st.sampled_from(sorted(UNARY)), rows=SIDE, cols=SIDE, dtype=st.sampled_from(DTYPES))
def test_unary_matches_numpy(name, rows, cols, dtype):
    _unary_case(name, (rows, cols), dtype, rows * 131 + cols)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_ragged_1d_and_f16(name):
    _unary_case(name, (37,), F16, 1)


@settings(max_examples=12)
@given(name=st.sampled_from(sorted(BINARY)), rows=SIDE, cols=SIDE, dtype=st.sampled_from(DTYPES),
       bcast=st.sampled_from(["same", "row", "col", "one", "vec", "outer"]))
def test_binary_broadcasts_like_numpy(name, rows, cols, dtype, bcast):
    a_shape = {"outer": (rows, 1)}.get(bcast, (rows, cols))
    b_shape = {"same": (rows, cols), "row": (rows, 1), "col": (1, cols), "one": (1, 1), "vec": (cols,),
               "outer": (1, cols)}[bcast]
    a = data(a_shape, dtype, rows)
    b = data(b_shape, dtype, cols, 0.5, 2.0)  # positive: a divisor away from zero
    got = _run(lambda x, y: op(name)(x, y), [a, b], [dtype, dtype])
    want = BINARY[name](a.astype(np.float64), b.astype(np.float64))
    close(got, want, dtype)


@pytest.mark.parametrize("shape", SHAPES)
def test_add_of_any_shape(shape):
    a, b = data(shape, F32, 1), data(shape, F32, 2)
    close(_run(lambda x, y: T.add(x, y), [a, b], [F32, F32]), a + b, F32)


@pytest.mark.parametrize("name,ref", [("add", np.add), ("sub", np.subtract), ("mul", np.multiply),
                                    ("div", np.divide), ("maximum", np.maximum), ("minimum", np.minimum)])
def test_scalar_operand(name, ref):
    x = data((9, 70), F32, 3)
    close(_run(lambda a: op(name)(a, 0.75), [x], [F32]), ref(x, np.float32(0.75)), F32)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, -1, -2])
def test_pow_by_integer(n):
    x = data((11, 45), F32, 4, 0.5, 1.5)
    close(_run(lambda a: L.pow(a, n), [x], [F32]), x.astype(np.float64) ** n, F32)


@pytest.mark.parametrize("src,dst", [(F32, F16), (F16, F32), (F32, BF16), (BF16, F32)])
def test_cast(src, dst):
    x = data((33, 70), src, 5)
    got = _run(lambda a: T.cast(a, dst), [x], [src])
    assert got.dtype == NP[dst]
    close(got, x.astype(NP[dst]), dst)


@pytest.mark.parametrize("a,b", [((2, 3, 37, 70), (2, 3, 37, 70)), ((3, 9, 40), (40,)), ((4, 5, 6), (5, 1)),
                                 ((2, 1, 8), (2, 5, 8))])
def test_nd_tensors_loop_over_leading_dims(a, b):
    x, y = data(a, F32, 1), data(b, F32, 2)
    params = [("x", a, F32), ("y", b, F32)]
    got = run(program(lambda p, q: T.add(p, q), params), x, y).outputs[0]
    close(got, x + y, F32)
