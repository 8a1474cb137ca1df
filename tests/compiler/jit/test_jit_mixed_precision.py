"""Mixed float dtypes in jit code behave as torch's: FP16 (or BF16) with FP32 computes in FP32 and gives
FP32 (the narrower operand is widened first, exactly), and nothing narrows a value silently: an FP32
value written into an FP16 output is an error at the user's line until ``pl.cast`` states it."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import PyptoTypeError


@pl.jit
def add_in_region(a: pl.Tensor, b: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y[:, :] = pl.add(a[:, :], b[:, :])


@pl.jit
def add_then_cast(a: pl.Tensor, b: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y[:, :] = pl.cast(pl.add(a[:, :], b[:, :]), pl.FP16, mode="rint")


@pl.jit
def add_in_orchestration(a: pl.Tensor, b: pl.Tensor, y: pl.Out[pl.Tensor]):
    y = pl.add(a, b)  # noqa: F841 -- the user pattern under test: rebinding an Out parameter


def _operands() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(41)
    a = (rng.standard_normal((16, 32)) * 100).astype(np.float16)
    b = (rng.standard_normal((16, 32)) * 1e-2).astype(np.float32)
    return a, b


@pytest.mark.parametrize("kernel", [add_in_region, add_in_orchestration])
def test_fp16_plus_fp32_is_computed_and_returned_in_fp32(kernel):
    a, b = _operands()
    y = np.zeros((16, 32), np.float32)
    kernel(a, b, y)
    exact = a.astype(np.float32) + b
    np.testing.assert_array_equal(y, exact)
    # computing in FP16 (or narrowing on the way) would have lost the small addend
    assert np.any(exact.astype(np.float16).astype(np.float32) != exact)


def test_fp32_value_into_an_fp16_output_in_a_region_is_an_error_at_the_line():
    a, b = _operands()
    with pytest.raises(PyptoTypeError, match=r"test_jit_mixed_precision.py:\d+:\d+: .*tile dtype FP32 differs from "
                       r"output tensor dtype FP16"):
        add_in_region(a, b, np.zeros((16, 32), np.float16))


def test_fp32_value_rebinding_an_fp16_output_in_orchestration_is_an_error_at_the_line():
    a, b = _operands()
    line = add_in_orchestration.__wrapped__.__code__.co_firstlineno + 2
    with pytest.raises(PyptoTypeError, match=rf"test_jit_mixed_precision.py:{line}:\d+: .*Cannot reassign 'y' with a "
                       r"different type.*FP16.*FP32"):
        add_in_orchestration(a, b, np.zeros((16, 32), np.float16))


def test_an_explicit_cast_narrows_the_fp32_result():
    a, b = _operands()
    y = np.zeros((16, 32), np.float16)
    add_then_cast(a, b, y)
    np.testing.assert_array_equal(y, (a.astype(np.float32) + b).astype(np.float16))
