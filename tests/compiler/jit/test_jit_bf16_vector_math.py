"""bf16 on A2/A3: the vector unit has no bf16 arithmetic, so a jit kernel either casts through fp32
(and matches NumPy to bf16 precision) or gets an error at the user's line naming BF16."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import PyptoError


@pl.jit
def bf16_add_direct(x: pl.Tensor, y: pl.Tensor, z: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        z[:, :] = pl.add(x[:, :], y[:, :])


@pl.jit
def bf16_add_through_fp32(x: pl.Tensor, y: pl.Tensor, z: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        a = pl.cast(x[:, :], pl.FP32)
        b = pl.cast(y[:, :], pl.FP32)
        z[:, :] = pl.cast(pl.add(a, b), pl.BF16)


def _inputs() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(14)
    return (rng.standard_normal((16, 32)).astype(ml_dtypes.bfloat16),
            rng.standard_normal((16, 32)).astype(ml_dtypes.bfloat16))


def test_bf16_tile_add_is_an_error_at_the_add():
    x, y = _inputs()
    with pytest.raises(PyptoError, match=r"BF16 tiles are not supported") as info:
        bf16_add_direct(x, y, np.zeros_like(x))
    line = bf16_add_direct.__wrapped__.__code__.co_firstlineno + 3
    assert str(info.value).startswith(f"{__file__}:{line}:")


def test_bf16_add_through_fp32_casts_matches_numpy():
    x, y = _inputs()
    z = np.zeros_like(x)
    bf16_add_through_fp32(x, y, z)
    want = x.astype(np.float32) + y.astype(np.float32)
    np.testing.assert_allclose(z.astype(np.float32), want, rtol=1.6e-2, atol=1e-2)
