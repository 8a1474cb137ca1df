"""Subscripts of a tile in InCore code (spec pypto-jit §6.1: "Subscripts on Tensor and Tile values
follow NumPy rules"): ``t[a:b, c:d]`` is the window ``pl.tile.slice(t, [b - a, d - c], [a, c])`` takes,
a scalar index keeps its axis as a unit one. Red team 12 found them refused ("unsupported expression:
Slice") while ``pl.tile.slice`` of the same window worked."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import PyptoError


@pl.jit
def quadrants(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    """y [8, 32] = top-left + bottom-right - top-right * bottom-left of one [16, 64] load, two
    quadrants by pl.tile.slice and two by subscript."""
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="quadrants"):
        t = pl.load(x, [0, 0], [16, 64])
        tl = pl.tile.slice(t, [8, 32], [0, 0])
        br = pl.tile.slice(t, [8, 32], [8, 32])
        tr = t[0:8, 32:64]
        bl = t[8:, :32]
        pl.store(pl.sub(pl.add(tl, br), pl.mul(tr, bl)), [0, 0], y)


@pl.jit
def rows_by_index(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    """y [2, 64]: row 3 and row 12 of x [16, 64], each picked by a scalar index ([1, 64] tiles)."""
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="rows"):
        t = pl.load(x, [0, 0], [16, 64])
        pl.store(t[3, :], [0, 0], y)
        pl.store(pl.muls(t[12], 2.0), [1, 0], y)


@pl.jit
def window_past_the_tile(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="past"):
        t = pl.load(x, [0, 0], [16, 64])
        pl.store(t[8:16, 48:80], [0, 0], y)


def _x() -> np.ndarray:
    return np.random.default_rng(21).standard_normal((16, 64)).astype(np.float32)


def test_tile_windows_by_subscript_equal_numpy_slices():
    x = _x()
    y = np.full((8, 32), np.nan, np.float32)
    quadrants(x, y)
    np.testing.assert_allclose(y, x[:8, :32] + x[8:, 32:] - x[:8, 32:] * x[8:, :32], rtol=1e-6)


def test_a_scalar_index_of_a_tile_keeps_a_unit_axis():
    x = _x()
    y = np.full((2, 64), np.nan, np.float32)
    rows_by_index(x, y)
    np.testing.assert_array_equal(y, np.stack([x[3], 2 * x[12]]))


def test_a_tile_window_past_the_tile_is_refused_at_its_line():
    with pytest.raises(PyptoError, match=r"test_round12_tile_subscripts.py:\d+:\d+: .*axis 1: window \[48, 80\) is "
                                         r"outside 0..64"):
        window_past_the_tile(_x(), np.zeros((8, 32), np.float32))
