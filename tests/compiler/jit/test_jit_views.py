"""Orchestration views (spec pypto-jit §6.1): outside InCore code a subscript or pl.slice of a tensor is a
window of the same buffer (no copy), so a kernel storing into a view writes the caller's tensor; slice
assignment of a tensor assembles it in place; a scalar index drops its axis."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import PyptoError


@pl.jit.incore
def scale_block(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    y[:, :] = pl.muls(x[:, :], 2.0)
    return y


@pl.jit
def scale_by_views(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    for r in pl.range(0, x.shape[0], 16):
        xv = x[r:r + 16, :]
        yv = pl.slice(y, [16, 32], [r, 0])
        yv = scale_block(xv, yv)


def test_a_kernel_writing_a_view_writes_the_base_tensor():
    x = np.random.default_rng(0).standard_normal((48, 32)).astype(np.float32)
    y = np.zeros_like(x)
    scale_by_views(x, y)
    np.testing.assert_allclose(y, 2 * x, rtol=1e-6)


@pl.jit
def assemble_windows(x: pl.Tensor, y: pl.Out[pl.Tensor], tmp: pl.Out[pl.Tensor]):
    top = x[0:8, :]
    with pl.at(level=pl.Level.CORE_GROUP):
        tmp[:, :] = pl.adds(top[:, :], 1.0)
    y[8:16, :] = tmp
    y[0, :] = x[3]  # a rank-1 view assembled into a rank-reduced window
    y[1:2, :] = x[5:6, :]


def test_slice_assignment_in_orchestration_assembles_in_place():
    x = np.random.default_rng(1).standard_normal((16, 32)).astype(np.float32)
    y, tmp = np.full_like(x, 7.0), np.zeros((8, 32), np.float32)
    assemble_windows(x, y, tmp)
    np.testing.assert_allclose(y[8:16], x[:8] + 1, rtol=1e-6)
    np.testing.assert_array_equal(y[0], x[3])
    np.testing.assert_array_equal(y[1], x[5])
    np.testing.assert_array_equal(y[2:8], 7.0)


@pl.jit
def misfit(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    y[0:4, :] = x[0:8, :]


def test_a_misfit_window_points_at_the_assignment():
    x = np.zeros((8, 16), np.float32)
    with pytest.raises(PyptoError, match=r"test_jit_views.py:\d+:\d+: .*does not fit the window"):
        misfit(x, np.zeros_like(x))
