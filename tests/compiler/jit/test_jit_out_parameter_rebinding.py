"""`z = <tensor op>` where z is an `pl.Out` parameter of a jit entry: the caller's array must end up
holding the value, or the program must be rejected at the user's line. Today all three forms below
run with exit 0 and leave the caller's `z` untouched (a silent wrong number): the rebinding makes a
new SSA tensor (z_1) that is never written back, and a jit call drops the entry's return values.
The fix belongs to the jit front end / pl.at outliner (jit.py, placement.py), which another helper is
changing, so these are strict xfails."""

from __future__ import annotations

import numpy as np
import pytest

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


@pytest.mark.xfail(strict=True, reason="silent wrong number: 'z = <tensor op>' in a pl.at region leaves "
                   "the caller's Out array untouched (placement outliner)")
def test_out_rebound_inside_a_region_reaches_the_caller():
    _outcome(rebind_in_region, lambda x, y: np.exp(x) + y)


@pytest.mark.xfail(strict=True, reason="silent wrong number: a tensor op in jit orchestration code (spec §1.2: "
                   "'Misplaced tensor op') runs on the host and its rebinding of the Out param is dropped")
def test_out_rebound_by_an_orchestration_tensor_op_is_written_or_rejected():
    _outcome(rebind_in_orchestration, lambda x, y: x + y)


@pytest.mark.xfail(strict=True, reason="silent wrong number: an @pl.jit.incore kernel that rebinds its Out "
                   "param stores into a new out_0 tensor, not into z, and the jit call drops the return")
def test_out_rebound_inside_an_incore_function_reaches_the_caller():
    _outcome(rebind_in_incore_function, lambda x, y: x + y)
