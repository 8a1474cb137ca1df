"""``y[:, :] = v`` where ``y`` has a pl.dynamic row count and ``v`` is a tensor (a library op's result in a
pl.at region, or a tensor in orchestration) writes the whole tensor, however many rows it has at run
time: it was refused with "an open slice of a dynamic axis has no constant extent", which only a tile
(whose shape is static) needs. One compiled program serves every row count."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import PyptoError

R = pl.dynamic("R")


@pl.jit
def scaled_softmax(x: pl.Tensor[[R, 64], pl.FP32], y: pl.Out[pl.Tensor[[R, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="softmax_rows"):
        y[:, :] = pl.softmax(pl.mul(x, 2.0))


@pl.jit
def two_outputs(x: pl.Tensor[[R, 16], pl.FP32], y: pl.Out[pl.Tensor[[R, 16], pl.FP32]],
                z: pl.Out[pl.Tensor[[R, 16], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y[:, :] = pl.exp(x)
        z[:] = pl.add(x, 1.0)
    y2 = pl.create_tensor([8, 16], dtype=pl.FP32)
    y2[:, :] = x[0:8, :]


@pl.jit
def tile_into_dynamic(x: pl.Tensor[[R, 16], pl.FP32], y: pl.Out[pl.Tensor[[R, 16], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y[:, :] = pl.load(x, [0, 0], [8, 16])


def test_one_program_for_every_row_count():
    rng = np.random.default_rng(0)
    for rows in (5, 37, 64):
        x = rng.standard_normal((rows, 64)).astype(np.float32)
        y = np.zeros_like(x)
        scaled_softmax(x, y)
        e = np.exp(2 * x - (2 * x).max(1, keepdims=True))
        np.testing.assert_allclose(y, e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-6)
    assert len(scaled_softmax._cache) == 1


def test_two_whole_writes_in_a_region_and_a_view_copy_in_orchestration():
    x = np.random.default_rng(1).standard_normal((11, 16)).astype(np.float32)
    y, z = np.zeros_like(x), np.zeros_like(x)
    two_outputs(x, y, z)
    np.testing.assert_allclose(y, np.exp(x), rtol=1e-6)
    np.testing.assert_allclose(z, x + 1, rtol=1e-6)


def test_a_tile_still_needs_a_constant_window():
    x = np.zeros((11, 16), np.float32)
    with pytest.raises(PyptoError, match="an open slice of a dynamic axis has no constant extent"):
        tile_into_dynamic(x, np.zeros_like(x))
