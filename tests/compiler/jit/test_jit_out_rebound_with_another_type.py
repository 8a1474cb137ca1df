"""An Out parameter rebound to a value of another dtype or shape is an error at the assignment (spec
pypto-jit §3: "Cannot reassign 'out' with a different type"). It used to cast silently (another dtype)
or end in a raw NumPy ValueError after the run (another shape)."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import PyptoTypeError


@pl.jit
def add_into(x: pl.Tensor, z: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y = pl.add(x, z)
    return y


def _line() -> int:
    return add_into.__wrapped__.__code__.co_firstlineno + 3


@pytest.mark.parametrize("y_shape, y_dtype, says", [
    ((8, 16), np.float16, r"the Out parameter is Tensor\[\[8, 16\], FP16\], the value is Tensor\[\[8, 16\], FP32\]"),
    ((4, 16), np.float32, r"the Out parameter is Tensor\[\[4, 16\], FP32\], the value is Tensor\[\[8, 16\], FP32\]"),
    ((128,), np.float32, r"the Out parameter is Tensor\[\[128\], FP32\]"),
])
def test_out_rebound_to_another_type_is_an_error_at_the_assignment(y_shape, y_dtype, says):
    x = np.ones((8, 16), np.float32)
    with pytest.raises(PyptoTypeError, match="Cannot reassign 'y' with a different type: " + says) as info:
        add_into(x, x, np.zeros(y_shape, y_dtype))
    assert str(info.value).startswith(f"{__file__}:{_line()}:")


def test_out_rebound_to_the_same_type_still_runs():
    x = np.random.default_rng(50).standard_normal((8, 16)).astype(np.float32)
    y = np.zeros_like(x)
    add_into(x, x, y)
    np.testing.assert_allclose(y, 2 * x, rtol=1e-6)
