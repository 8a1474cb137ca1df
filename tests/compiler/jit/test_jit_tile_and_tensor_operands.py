"""A binary op in a pl.at region given a tile (a window ``x[...]`` read in InCore code is a load) and a
tensor (a parameter, or a view taken outside the region) says so at the call, and what to do. It
failed inside one level's op: "tensor.add_scalar: argument 'rhs' must be a Scalar, got Tile" for
pl.add(acc, x[0:8, :]). The same computation with the view taken outside the region runs."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import PyptoTypeError


@pl.jit
def add_window_loaded_in_region(x: pl.Tensor, acc: pl.InOut[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        acc[:, :] = pl.add(acc, x[0:8, :])


@pl.jit
def rope_half_loaded_in_region(q: pl.Tensor, cos: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y[:, :] = pl.mul(q[:, 0:16], cos)


@pl.jit
def add_view_taken_outside(x: pl.Tensor, acc: pl.InOut[pl.Tensor]):
    top = x[0:8, :]
    with pl.at(level=pl.Level.CORE_GROUP):
        acc[:, :] = pl.add(acc, top)


def test_tile_and_tensor_operands_are_named_at_the_call():
    x, acc = np.ones((16, 16), np.float32), np.ones((8, 16), np.float32)
    with pytest.raises(PyptoTypeError, match="pl.add: operand 2 is a tile and operand 1 a tensor") as info:
        add_window_loaded_in_region(x, acc)
    assert f"{__file__}:{add_window_loaded_in_region.__wrapped__.__code__.co_firstlineno + 3}:" in str(info.value)
    assert "take the window as a view outside the pl.at region" in str(info.value)
    with pytest.raises(PyptoTypeError, match="pl.mul: operand 1 is a tile and operand 2 a tensor"):
        rope_half_loaded_in_region(np.ones((8, 32), np.float32), np.ones((8, 16), np.float32), np.zeros((8, 16), np.float32))


def test_the_view_taken_outside_the_region_runs():
    x = np.random.default_rng(41).standard_normal((16, 16)).astype(np.float32)
    acc = np.ones((8, 16), np.float32)
    add_view_taken_outside(x, acc)
    np.testing.assert_allclose(acc, 1 + x[:8], rtol=1e-6)
