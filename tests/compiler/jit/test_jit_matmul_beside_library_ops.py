"""A fused linear layer written the way users write it: matmul, bias add and an activation in one pl.at
region. No core runs a matmul and vector ops together: SplitCubeVector keeps an element-wise epilogue
with its matmul as one group kernel (the product pushed to the AIVs through the C2V FIFO) and splits
the softmax's kernel into a cube kernel and a vector kernel (the product through GM); the results
are the same as the hand-written split into two regions (this used to be refused at the vector op)."""

from __future__ import annotations

import numpy as np

import pypto.language as pl


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


def test_library_op_beside_a_matmul_in_one_region_runs_split():
    x, w, b = _inputs()
    y = np.zeros((64, 80), np.float32)
    linear_relu_one_region(x, w, b, y)
    want = np.maximum(x.astype(np.float32) @ w.astype(np.float32) + b, 0)
    np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-3)
    assert linear_relu_one_region.last_result.launches == 1  # one group kernel (was 2, through GM)
    s = np.zeros((64, 80), np.float32)
    softmax_of_product(x, w, s)
    p = x.astype(np.float64) @ w.astype(np.float64)
    e = np.exp(p - p.max(axis=1, keepdims=True))
    np.testing.assert_allclose(s, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-6)


def test_matmul_and_activation_in_two_regions_match_numpy():
    x, w, b = _inputs()
    y = np.zeros((64, 80), np.float32)
    linear_relu_two_regions(x, w, b, y)
    want = np.maximum(x.astype(np.float32) @ w.astype(np.float32) + b, 0)
    np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-3)
