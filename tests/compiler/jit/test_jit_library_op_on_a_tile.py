"""A tensor-level library op (pl.softmax, pl.layer_norm...) applied to a tile in InCore code is
refused at the call, saying why (the operand is a tile) and what to do, instead of "unknown op"."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import PyptoTypeError


@pl.jit
def softmax_of_a_slice(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y[0:16, :] = pl.softmax(x[0:16, :])


@pl.jit
def softmax_of_a_view(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    xv = x[0:16, :]
    with pl.at(level=pl.Level.CORE_GROUP):
        s = pl.softmax(xv)
    y[0:16, :] = s


def test_library_op_on_a_tile_names_the_tile_at_the_call():
    x = np.ones((32, 64), np.float32)
    with pytest.raises(PyptoTypeError, match=r"pl.softmax is a tensor-level op but its operand is a tile") as info:
        softmax_of_a_slice(x, np.zeros_like(x))
    line = softmax_of_a_slice.__wrapped__.__code__.co_firstlineno + 3
    assert str(info.value).startswith(f"{__file__}:{line}:")


def test_the_same_op_on_a_view_taken_outside_the_region_runs():
    x = np.random.default_rng(61).standard_normal((32, 64)).astype(np.float32)
    y = np.zeros_like(x)
    softmax_of_a_view(x, y)
    e = np.exp(x[:16] - x[:16].max(axis=1, keepdims=True))
    np.testing.assert_allclose(y[:16], e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)
    assert not y[16:].any()
