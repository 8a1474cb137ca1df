"""Mixed float dtypes in jit code: spec pypto-jit §3 says "no implicit promotion anywhere: mixing dtypes
needs pl.cast". An element-wise op of an FP16 and an FP32 tensor (or tile) is an error at the user's line
naming both dtypes and the fix; with the cast written, FP16 widened to FP32 computes exactly in FP32. Nothing
narrows a value silently either: an FP32 value written into an FP16 output is an error at the user's line
until ``pl.cast`` states it. (Until red team round 4 the mix was promoted as torch does; the spec is explicit.)
The seed-era @pl.program surface keeps its promotion rule (pypto-language §2.1)."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import PyptoTypeError
from pypto.runtime import run


@pl.jit
def add_in_region(a: pl.Tensor, b: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y[:, :] = pl.add(a[:, :], b[:, :])


@pl.jit
def add_in_orchestration(a: pl.Tensor, b: pl.Tensor, y: pl.Out[pl.Tensor]):
    y = pl.add(a, b)  # noqa: F841 -- the user pattern under test: rebinding an Out parameter


@pl.jit
def cast_add_in_region(a: pl.Tensor, b: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y[:, :] = pl.add(pl.cast(a[:, :], pl.FP32), b[:, :])


@pl.jit
def cast_add_in_orchestration(a: pl.Tensor, b: pl.Tensor, y: pl.Out[pl.Tensor]):
    y = pl.add(pl.cast(a, pl.FP32), b)  # noqa: F841 -- rebinding an Out parameter


@pl.jit
def add_then_cast(a: pl.Tensor, b: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y[:, :] = pl.cast(pl.add(pl.cast(a[:, :], pl.FP32), b[:, :]), pl.FP16, mode="rint")


@pl.program
class SeedAdd:
    @pl.function(type=pl.FunctionType.InCore)
    def kern(self, a: pl.Tensor[[16, 32], pl.FP16], b: pl.Tensor[[16, 32], pl.FP32]) -> pl.Tensor[[16, 32], pl.FP32]:
        c = pl.add(a, b)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 32], pl.FP16], b: pl.Tensor[[16, 32], pl.FP32]) -> pl.Tensor[[16, 32], pl.FP32]:
        c = self.kern(a, b)
        return c


def _operands() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(41)
    a = (rng.standard_normal((16, 32)) * 100).astype(np.float16)
    b = (rng.standard_normal((16, 32)) * 1e-2).astype(np.float32)
    return a, b


def _line(kernel, offset: int) -> int:
    return kernel.__wrapped__.__code__.co_firstlineno + offset


@pytest.mark.parametrize(("kernel", "offset"), [(add_in_region, 3), (add_in_orchestration, 2)])
def test_fp16_plus_fp32_without_a_cast_is_an_error_at_the_line_naming_both_dtypes(kernel, offset):
    a, b = _operands()
    with pytest.raises(PyptoTypeError, match=rf"test_jit_mixed_precision.py:{_line(kernel, offset)}:\d+: .*pl.add: "
                       r"operands are FP16 and FP32; .*does not promote implicitly.*pl.cast"):
        kernel(a, b, np.zeros((16, 32), np.float32))


@pytest.mark.parametrize("kernel", [cast_add_in_region])
def test_fp16_cast_to_fp32_plus_fp32_is_computed_and_returned_in_fp32(kernel):
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
        cast_add_in_region(a, b, np.zeros((16, 32), np.float16))


def test_fp32_value_rebinding_an_fp16_output_in_orchestration_is_an_error_at_the_line():
    a, b = _operands()
    with pytest.raises(PyptoTypeError, match=rf"test_jit_mixed_precision.py:{_line(cast_add_in_orchestration, 2)}:"
                       r"\d+: .*Cannot reassign 'y' with a different type.*FP16.*FP32"):
        cast_add_in_orchestration(a, b, np.zeros((16, 32), np.float16))


def test_an_explicit_cast_narrows_the_fp32_result():
    a, b = _operands()
    y = np.zeros((16, 32), np.float16)
    add_then_cast(a, b, y)
    np.testing.assert_array_equal(y, (a.astype(np.float32) + b).astype(np.float16))


def test_the_seed_program_surface_still_promotes_fp16_plus_fp32_to_fp32():
    a, b = _operands()
    got = run(SeedAdd, a, b).outputs[0]
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, a.astype(np.float32) + b)


def test_the_same_computation_on_the_control_plane_is_refused_as_misplaced():
    """pypto-jit §1.2: compute outside pl.at is refused (upstream's compile() does), at the op's line."""
    a, b = _operands()
    with pytest.raises(PyptoTypeError, match=rf"test_jit_mixed_precision.py:{_line(cast_add_in_orchestration, 2)}:"
                       r"\d+: .*Misplaced tensor op: pl\.(add|cast) on the control plane"):
        cast_add_in_orchestration(a, b, np.zeros((16, 32), np.float32))
