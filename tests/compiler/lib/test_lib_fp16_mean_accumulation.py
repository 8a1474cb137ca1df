"""FP16/BF16 sums and means accumulate in FP32, as NumPy and torch do: 4096 FP16 values near 62 sum to
about 254000, past FP16's 65504, so an FP16 accumulator returned inf for the mean (red team round 4).
The result is rounded to the output dtype once."""

from __future__ import annotations

import ml_dtypes
import numpy as np

import pypto.language as pl


@pl.jit
def row_mean(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="row_mean"):
        y[:, :] = pl.mean(x, axis=-1, keepdim=True)


@pl.jit
def col_mean(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="col_mean"):
        y[:, :] = pl.mean(x, axis=0, keepdim=True)


def test_fp16_mean_accumulates_past_the_fp16_range():
    x = np.random.default_rng(0).uniform(60, 64, (4, 4096)).astype(np.float16)
    y = np.zeros((4, 1), np.float16)
    row_mean(x, y)
    np.testing.assert_allclose(y.astype(np.float64), x.astype(np.float64).mean(1, keepdims=True), rtol=1e-3)


def test_fp16_column_mean_accumulates_past_the_fp16_range():
    # 8192 values near 10 in each column sum to about 82000 (> 65504) before the division.
    x = np.random.default_rng(1).uniform(9, 11, (8192, 16)).astype(np.float16)
    y = np.zeros((1, 16), np.float16)
    col_mean(x, y)
    np.testing.assert_allclose(y.astype(np.float64), x.astype(np.float64).mean(0, keepdims=True), rtol=1e-3)


def test_bf16_mean_keeps_chunk_sums_a_bf16_accumulator_would_round_away():
    # 65536 then 20000 values of 0.1: past 65536 a BF16 ulp is 512, so each column chunk's partial sum
    # (well under 256) added to a BF16 accumulator rounds away; FP32 keeps them (mean ~ 3.38). The
    # target has no BF16 row_sum, so this already ran in FP32: the test keeps it that way.
    x = np.full((2, 20001), 0.1, np.float32)
    x[:, 0] = 65536.0
    xb = x.astype(ml_dtypes.bfloat16)
    y = np.zeros((2, 1), ml_dtypes.bfloat16)
    row_mean(xb, y)
    want = xb.astype(np.float64).mean(1, keepdims=True)
    np.testing.assert_allclose(y.astype(np.float64), want, rtol=1.6e-2)
