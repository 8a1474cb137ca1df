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
