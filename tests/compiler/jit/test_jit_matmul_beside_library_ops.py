"""A fused linear layer written the way users write it: matmul, bias add and an activation in one pl.at
region. A kernel holding a tensor-level matmul is lowered without the library's tile loops and its
product lands in cube buffers, so a vector op beside it (pl.add, pl.relu, pl.softmax) is refused at
that op with what to do, instead of a verifier message about internal names ("'_t1' is used before
it is defined") or "kernel mixes vector and cube tiles" at the function; the suggested split runs."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import CompileError


@pl.jit
def linear_relu_one_region(x: pl.Tensor, w: pl.Tensor, b: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="linear"):
        y = pl.relu(pl.add(pl.matmul(x, w, out_dtype=pl.FP32), b))
    return y


@pl.jit
def softmax_of_product(x: pl.Tensor, w: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="scores"):
        y = pl.softmax(pl.matmul(x, w, out_dtype=pl.FP32))
    return y


@pl.jit
def linear_relu_two_regions(x: pl.Tensor, w: pl.Tensor, b: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="project"):
        h = pl.matmul(x, w, out_dtype=pl.FP32)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="bias_relu"):
        y = pl.relu(pl.add(h, b))
    return y


def _inputs() -> tuple:
    rng = np.random.default_rng(80)
    return (rng.standard_normal((64, 96)).astype(np.float16), rng.standard_normal((96, 80)).astype(np.float16),
            rng.standard_normal((1, 80)).astype(np.float32))


def test_library_op_beside_a_matmul_in_one_region_is_refused_at_the_op():
    x, w, b = _inputs()
    with pytest.raises(CompileError, match=r"pl.add cannot share a kernel \('linear'\) with a tensor-level "
                                           r"pl.matmul") as info:
        linear_relu_one_region(x, w, b, np.zeros((64, 80), np.float32))
    line = linear_relu_one_region.__wrapped__.__code__.co_firstlineno + 3
    assert str(info.value).startswith(f"{__file__}:{line}:")
    with pytest.raises(CompileError, match=r"pl.softmax cannot share a kernel \('scores'\)") as info:
        softmax_of_product(x, w, np.zeros((64, 80), np.float32))
    line = softmax_of_product.__wrapped__.__code__.co_firstlineno + 3
    assert str(info.value).startswith(f"{__file__}:{line}:")


def test_matmul_and_activation_in_two_regions_match_numpy():
    x, w, b = _inputs()
    y = np.zeros((64, 80), np.float32)
    linear_relu_two_regions(x, w, b, y)
    want = np.maximum(x.astype(np.float32) @ w.astype(np.float32) + b, 0)
    np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-3)
