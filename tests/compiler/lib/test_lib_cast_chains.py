"""A tensor-level pl.cast between dtypes the A2/A3 vector unit does not convert directly (FP32 -> INT8,
INT8 -> FP32, BF16 -> INT8, INT32 -> INT8...) runs as a chain of legal conversions, as the hardware
does, and rounds as one direct conversion would (NumPy's rounding then saturation). It was refused
with "cast: FP32 tiles cannot be converted to INT8" (int8 quantization written as torch does)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import pypto.language as pl
from pypto.dtype import DataType
from pypto.lib.elementwise import conversion_path

BF16 = ml_dtypes.bfloat16
MODES = {1: np.rint, 2: lambda v: np.sign(v) * np.floor(np.abs(v) + 0.5), 3: np.floor, 4: np.ceil, 5: np.trunc}


@pl.jit
def convert(x: pl.Tensor, y: pl.Out[pl.Tensor], mode: int):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="convert"):
        y[:, :] = pl.cast(x, y.dtype, mode=mode)


def _values() -> np.ndarray:
    # 101.49999 rounds to 101.5 in FP16: a chain rounding to nearest twice would give 102 under rint
    ties = [2.5, -2.5, 0.5, -0.5, 101.49999, -101.49999, 100.5, 127.5, -128.5, 63.99999, 1e6, -1e6]
    rng = np.random.default_rng(0)
    return np.resize(np.concatenate([ties, rng.uniform(-140, 140, 300)]), (9, 37)).astype(np.float32)


@pytest.mark.parametrize("mode", sorted(MODES))
def test_fp32_to_int8_rounds_once_and_saturates(mode):
    x = _values()
    y = np.zeros(x.shape, np.int8)
    convert(x, y, mode)
    want = np.clip(MODES[mode](x.astype(np.float64)), -128, 127).astype(np.int8)
    np.testing.assert_array_equal(y, want)


@pytest.mark.parametrize("src,dst", [(np.int8, np.float32), (np.int8, BF16), (BF16, np.int8), (np.int32, np.int8),
                                     (np.int8, np.int32), (np.uint8, np.float32), (BF16, np.float16)])
def test_chained_conversions_match_numpy(src, dst):
    v = np.clip(_values(), -100, 100)
    x = np.abs(v).astype(src) if src is np.uint8 else v.astype(src)
    y = np.zeros(x.shape, dst)
    convert(x, y, 1)
    want = np.rint(x.astype(np.float64))
    want = np.clip(want, -128, 127) if dst is np.int8 else x.astype(np.float64)
    np.testing.assert_array_equal(y.astype(np.float64), want.astype(dst).astype(np.float64))


def test_the_chain_is_the_shortest_legal_one():
    assert conversion_path(DataType.FP32, DataType.INT8) == [DataType.FP16, DataType.INT8]
    assert conversion_path(DataType.FP32, DataType.FP16) == [DataType.FP16]
    assert conversion_path(DataType.INT8, DataType.BF16) == [DataType.FP16, DataType.FP32, DataType.BF16]
