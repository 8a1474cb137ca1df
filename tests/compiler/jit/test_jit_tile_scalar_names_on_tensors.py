"""pl.adds/subs/muls/divs are the tile-scalar spellings; given a tensor they are the tensor op with a
scalar operand (unified names dispatch on the operand, spec pypto-jit §8), as pl.mul(tensor, 0.5) is.
They failed with "block.muls: argument 'lhs' must be a Tile" (attention written as
pl.softmax(pl.muls(scores, scale)))."""

from __future__ import annotations

import numpy as np

import pypto.language as pl


@pl.jit
def scaled_scores(q: pl.Tensor, k: pl.Tensor, p: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        s = pl.matmul(q, k, b_trans=True, out_dtype=pl.FP32)
        p = pl.softmax(pl.muls(s, 0.125))
    return p


@pl.jit
def affine(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y = pl.divs(pl.subs(pl.adds(pl.muls(x, 3.0), 1.0), 0.5), 2.0)
    return y


def test_attention_scores_scaled_with_muls():
    rng = np.random.default_rng(81)
    q, k = rng.standard_normal((37, 64)).astype(np.float16), rng.standard_normal((45, 64)).astype(np.float16)
    p = np.zeros((37, 45), np.float32)
    scaled_scores(q, k, p)
    s = q.astype(np.float32) @ k.astype(np.float32).T * 0.125
    e = np.exp(s - s.max(axis=1, keepdims=True))
    np.testing.assert_allclose(p, e / e.sum(axis=1, keepdims=True), rtol=1e-4, atol=1e-6)


def test_tile_scalar_names_on_a_tensor_in_a_region():
    x = np.random.default_rng(82).standard_normal((19, 70)).astype(np.float32)
    y = np.zeros_like(x)
    affine(x, y)
    np.testing.assert_allclose(y, ((x * 3 + 1) - 0.5) / 2, rtol=1e-6, atol=1e-6)
