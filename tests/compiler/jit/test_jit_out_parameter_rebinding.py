"""`z = <tensor op>` where z is an `pl.Out` parameter of a jit entry: the caller's array must end up
holding the value, or the program must be rejected at the user's line. The rebinding makes a new
tensor; the jit entry returns the final value of each Out parameter (an entry without ``return`` gets
one) and the call copies it into the caller's array when it is not already that array."""

from __future__ import annotations

import numpy as np

import pypto.language as pl
from pypto.errors import PyptoError


@pl.jit
def rebind_in_region(x: pl.Tensor, y: pl.Tensor, z: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        z = pl.add(pl.exp(x), y)
    return z


@pl.jit
def rebind_in_orchestration(x: pl.Tensor, y: pl.Tensor, z: pl.Out[pl.Tensor]):
    z = pl.add(x, y)  # noqa: F841 -- the user pattern under test: rebinding an Out parameter


@pl.jit.incore
def add_kernel(x: pl.Tensor, y: pl.Tensor, z: pl.Out[pl.Tensor]):
    z = pl.add(x, y)
    return z


@pl.jit
def rebind_in_incore_function(x: pl.Tensor, y: pl.Tensor, z: pl.Out[pl.Tensor]):
    z = add_kernel(x, y, z)


def _outcome(fn, want_fn) -> None:
    """Pass when the caller's z holds the value, or when the call is rejected at this file's line."""
    rng = np.random.default_rng(30)
    x = rng.standard_normal((16, 32)).astype(np.float32)
    y = rng.standard_normal((16, 32)).astype(np.float32)
    z = np.zeros_like(x)
    try:
        fn(x, y, z)
    except PyptoError as e:
        assert str(e).startswith(f"{__file__}:"), str(e)
        return
    np.testing.assert_allclose(z, want_fn(x, y), rtol=1e-5)


def test_out_rebound_inside_a_region_reaches_the_caller():
    _outcome(rebind_in_region, lambda x, y: np.exp(x) + y)


def test_out_rebound_by_an_orchestration_tensor_op_is_written_or_rejected():
    _outcome(rebind_in_orchestration, lambda x, y: x + y)


def test_out_rebound_inside_an_incore_function_reaches_the_caller():
    _outcome(rebind_in_incore_function, lambda x, y: x + y)


@pl.jit.incore
def softmax_kernel_through_an_alias(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    t = pl.softmax(x)
    y = t
    return y


@pl.jit.incore
def softmax_kernel_into_the_whole_window(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    y[:, :] = pl.softmax(x)
    return y


@pl.jit
def call_alias_kernel(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    softmax_kernel_through_an_alias(x, y)


@pl.jit
def call_window_kernel(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    softmax_kernel_into_the_whole_window(x, y)


def test_an_incore_out_parameter_bound_through_an_alias_or_its_whole_window_reaches_the_caller():
    # `y = t` named the final value of y `t`, so the kernel stored it into a fresh tensor and the
    # caller's y stayed zero (silently); `y[:, :] = v` in an InCore function was refused
    x = np.random.default_rng(31).standard_normal((16, 64)).astype(np.float32)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    for fn in (call_alias_kernel, call_window_kernel):
        y = np.zeros_like(x)
        fn(x, y)
        np.testing.assert_allclose(y, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)
