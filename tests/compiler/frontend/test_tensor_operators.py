"""Python operators on tensors (issue 12, lib12b item 1): ``x + y``, ``x - 1.0``, ``2.0 / x``, ``-x``,
``x ** 2``, ``x @ w``, ``x.T`` are the pypto.lib primitives they spell, in InCore functions,
Orchestration code, ``pl.at`` regions and @pl.jit code; checked against NumPy over shapes (1, primes,
more than one buffer, one row, one column) and dtypes. Comparisons on tiles are pl.cmp masks; what has
no tensor meaning (``//``, comparisons of tensors, ``**`` of a float) is refused at the operator."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pypto.language as pl
from pypto.errors import PyptoError
from pypto.runtime import run

R, C = 37, 130
TOL = {np.float32: 1e-5, np.float16: 2e-3, ml_dtypes.bfloat16: 1.6e-2}


def _expression(x, y, b):
    """The expression every form below computes, in NumPy."""
    return (x + y) * 2.0 - x / (y * y + 1.0) + b - 1.0 / (y * y + 2.0) + -x + x ** 3 - (1.0 - y)


@pl.program
class InCore:
    @pl.function(type=pl.FunctionType.InCore)
    def kern(self, x: pl.Tensor[[R, C], pl.FP32], y: pl.Tensor[[R, C], pl.FP32], b: pl.Tensor[[C], pl.FP32]) -> pl.Tensor[[R, C], pl.FP32]:
        z = (x + y) * 2.0 - x / (y * y + 1.0) + b - 1.0 / (y * y + 2.0) + -x + x ** 3 - (1.0 - y)
        return z

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[R, C], pl.FP32], y: pl.Tensor[[R, C], pl.FP32], b: pl.Tensor[[C], pl.FP32]) -> pl.Tensor[[R, C], pl.FP32]:
        z = self.kern(x, y, b)
        return z


@pl.program
class Orchestration:
    """The same expression in Orchestration code: each op is outlined into a kernel launch."""

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[R, C], pl.FP32], y: pl.Tensor[[R, C], pl.FP32], b: pl.Tensor[[C], pl.FP32]) -> pl.Tensor[[R, C], pl.FP32]:
        z = (x + y) * 2.0 - x / (y * y + 1.0) + b - 1.0 / (y * y + 2.0) + -x + x ** 3 - (1.0 - y)
        return z


def _inputs(shape, dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2, 2, shape).astype(dtype)
    y = rng.uniform(-2, 2, shape).astype(dtype)
    b = rng.uniform(-2, 2, shape[-1:]).astype(dtype)
    return x, y, b


@pytest.mark.parametrize("prog", [InCore, Orchestration], ids=["incore", "orchestration"])
def test_operators_in_incore_and_orchestration_code_match_numpy(prog):
    x, y, b = _inputs((R, C))
    got = run(prog, x, y, b).outputs[0]
    np.testing.assert_allclose(got, _expression(x, y, b), rtol=1e-5, atol=1e-4)


@pl.jit
def expression_in_region(x: pl.Tensor, y: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out = (x + y) * 2.0 - x / (y * y + 1.0) + b - 1.0 / (y * y + 2.0) + -x + x ** 3 - (1.0 - y)
    return out


@settings(max_examples=8, deadline=None)
@given(shape=st.sampled_from([(1, 1), (1, 130), (37, 1), (7, 13), (300, 130), (3, 9000), (2, 3, 5)]),
       dtype=st.sampled_from([np.float32, np.float16]))
def test_operators_in_a_jit_region_match_numpy_over_shapes_and_dtypes(shape, dtype):
    x, y, b = _inputs(shape, dtype, seed=len(shape))
    out = np.zeros(shape, dtype)
    expression_in_region(x, y, b, out)
    f = [v.astype(np.float32) for v in (x, y, b)]
    want = _expression(*f)
    # fp16: x ** 3 and the quotients carry fp16 rounding of intermediates up to |want| ~ 30
    np.testing.assert_allclose(out.astype(np.float32), want, rtol=TOL[dtype] * 4, atol=TOL[dtype] * 40)


@pl.jit
def linear_t(x: pl.Tensor, w: pl.Tensor, b: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="linear"):
        y = x @ w.T + b
    return y


@pytest.mark.parametrize("m,n,k", [(1, 1, 1), (37, 24, 130), (100, 70, 300)])
def test_matmul_and_transpose_operators_match_numpy(m, n, k):
    rng = np.random.default_rng(m)
    x = rng.standard_normal((m, k)).astype(np.float32)
    w = rng.standard_normal((n, k)).astype(np.float32)
    b = rng.standard_normal((n,)).astype(np.float32)
    y = np.zeros((m, n), np.float32)
    linear_t(x, w, b, y)
    np.testing.assert_allclose(y, x @ w.T + b, rtol=1e-4, atol=1e-4 * k ** 0.5)


@pl.jit
def reverse_axes(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y = x.T + 0.0
    return y


@pl.jit
def swap_last_two(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y = x.mT * 1.0
    return y


@pytest.mark.parametrize("shape", [(5,), (7, 13), (3, 4, 6)])
def test_dot_t_reverses_the_axes_as_numpy_does(shape):
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    y = np.zeros(x.T.shape, np.float32)
    reverse_axes(x, y)
    np.testing.assert_array_equal(y, x.T)
    if len(shape) > 1:
        z = np.zeros(np.swapaxes(x, -1, -2).shape, np.float32)
        swap_last_two(x, z)
        np.testing.assert_array_equal(z, np.swapaxes(x, -1, -2))


@pl.jit
def weak_scalars(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y = 0.5 * x + 1.0
    return y


def test_a_python_number_keeps_the_tensors_dtype():
    """fp16 x + 1.0 is fp16 (NumPy 2 / torch); pl.add(x, 1.0) would be fp32 by the spec's literal rule."""
    x = np.linspace(-4, 4, 64, dtype=np.float16).reshape(4, 16)
    y = np.zeros_like(x)
    weak_scalars(x, y)
    np.testing.assert_array_equal(y, 0.5 * x + np.float16(1.0))


@pl.jit
def true_division(a: pl.Tensor, b: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y = a / b
    return y


def test_integer_slash_is_true_division():
    """int32 / int32 is a float quotient (NumPy, torch), not pl.div's truncation."""
    a = np.array([[7, -7, 1, 100, -3, 0, 9, 5]], np.int32)
    b = np.array([[2, 2, 3, 7, 4, 5, -2, 5]], np.int32)
    y = np.zeros(a.shape, np.float32)
    true_division(a, b, y)
    np.testing.assert_allclose(y, a / b, rtol=1e-6)


@pl.jit
def relu_by_mask(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = x[:, :]
        y[:, :] = pl.sel(t > 0.0, t, -t * 0.25)


def test_a_comparison_of_tiles_is_the_mask_sel_takes():
    x = np.random.default_rng(5).standard_normal((16, 32)).astype(np.float32)
    y = np.zeros_like(x)
    relu_by_mask(x, y)
    np.testing.assert_allclose(y, np.where(x > 0, x, -x * 0.25), rtol=1e-6)


@pl.jit
def compares_tensors(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y = x > 0.0
    return y


@pl.jit
def floor_divides(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y = x // 2
    return y


@pl.jit
def float_power(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y = x ** 1.5
    return y


@pytest.mark.parametrize("fn,message", [
    (compares_tensors, "comparing tensors is not supported"),
    (floor_divides, "'//' is not supported on tensors/tiles; use pl.div"),
    (float_power, "'**' takes an integer constant exponent (or 0.5 / -0.5), got 1.5"),
])
def test_operators_without_a_tensor_meaning_are_refused_at_the_operator(fn, message):
    x = np.ones((8, 16), np.float32)
    with pytest.raises(PyptoError, match=message.replace("(", r"\(").replace(")", r"\)").replace("*", r"\*")) as e:
        fn(x, np.zeros_like(x))
    line = fn.__wrapped__.__code__.co_firstlineno + 3
    assert str(e.value).startswith(f"{__file__}:{line}:")
