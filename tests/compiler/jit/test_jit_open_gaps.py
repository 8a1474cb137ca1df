"""Programs written the way today's PyPTO users write them that the jit front end does not yet handle
as the spec (pypto-jit.md) says. Each is a strict xfail naming the gap; the fix belongs to code
another helper is changing (jit.py, placement.py, slicing.py), so it is recorded here instead."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl


@pl.jit
def exp_then_double(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        e = pl.exp(x[:, :])
    with pl.at(level=pl.Level.CORE_GROUP):
        y[:, :] = pl.muls(e, 2.0)


@pytest.mark.xfail(strict=True, reason="spec §4.1 (b): a name bound in a pl.at region and used after it "
                   "becomes a task output in DDR; placement rejects it ('only tensors can leave a kernel')")
def test_value_bound_in_one_region_feeds_the_next():
    x = np.random.default_rng(21).standard_normal((16, 32)).astype(np.float32)
    y = np.zeros_like(x)
    exp_then_double(x, y)
    np.testing.assert_allclose(y, 2 * np.exp(x), rtol=1e-5)


@pl.jit.incore
def copy_rows(a: pl.Tensor, b: pl.Out[pl.Tensor]):
    b[:, :] = pl.adds(a[:, :], 0.0)
    return b


@pl.jit
def copy_by_views(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    for r in pl.range(0, 32, 16):
        copy_rows(x[r:r + 16, :], y[r:r + 16, :])


def test_orchestration_views_passed_to_an_incore_kernel():
    x = np.random.default_rng(22).standard_normal((32, 16)).astype(np.float32)
    y = np.zeros_like(x)
    copy_by_views(x, y)
    np.testing.assert_allclose(y, x)


@pl.jit
def negate(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y[:, :] = pl.neg(x[:, :])


@pytest.mark.xfail(strict=True, reason="a float64 argument ends in a raw ValueError from pypto.dtype "
                   "('no PyPTO dtype for NumPy dtype float64') instead of a TypeError naming the jit function "
                   "and the argument (jit.py _classify)")
def test_float64_argument_is_a_type_error_naming_the_argument():
    x = np.ones((8, 8))
    with pytest.raises(TypeError, match=r"@pl.jit function 'negate': argument 'x'.*float64"):
        negate(x, np.zeros_like(x))


@pytest.mark.xfail(strict=True, reason="spec §2.6: lower() returns a program whose as_python() prints it "
                   "(upstream examples call it); ir Program has no as_python")
def test_lowered_program_prints_as_python():
    x = np.ones((8, 8), np.float32)
    text = negate.lower(x, np.zeros_like(x)).as_python()
    assert "neg" in text
