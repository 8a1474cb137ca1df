"""``-t`` on a tile is ``pl.neg(t)`` (Python operators on tiles and tensors spell the pl ops; it was
refused naming pl.neg, and before that "expected a scalar operand, got TileType")."""

from __future__ import annotations

import numpy as np

import pypto.language as pl


@pl.jit
def negate(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = x[:, :]
        y[:, :] = -t


def test_unary_minus_on_a_tile_is_pl_neg():
    x = np.linspace(-3, 3, 128, dtype=np.float32).reshape(8, 16)
    y = np.zeros_like(x)
    negate(x, y)
    np.testing.assert_array_equal(y, -x)
