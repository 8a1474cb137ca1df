"""Inside pl.manual_scope(), a value bound in one pl.at region and read by the next is a task output
the next task reads (spec pypto-jit §4.1 (b), §9): without deps= the two tasks race on hardware, and
the emulator must say so instead of letting program order hide it. With deps= it runs and matches.
A plain call of an ``@pl.jit.incore`` kernel in a manual scope is a task with no declared edges: a
conflict with another task of the scope is a race too, and calls on disjoint data are not."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import PyptoError


@pl.jit
def softmax_then_relu(x: pl.Tensor, y: pl.Out[pl.Tensor], declare: bool):
    with pl.manual_scope():
        if declare:
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="produce") as t1:
                s = pl.softmax(x)
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="consume", deps=[t1]):
                y = pl.relu(s)
        else:
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="produce"):
                s = pl.softmax(x)
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="consume"):
                y = pl.relu(s)
    return y


def _x() -> np.ndarray:
    return np.random.default_rng(64).standard_normal((37, 130)).astype(np.float32)


def test_declared_edge_between_regions_passing_a_value_runs():
    x = _x()
    y = np.zeros_like(x)
    softmax_then_relu(x, y, True)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)


def test_missing_edge_for_a_value_passed_between_regions_is_a_race():
    x = _x()
    with pytest.raises(PyptoError, match=r"race: task 'consume' and task 'produce'"):
        softmax_then_relu(x, np.zeros_like(x), False)


@pl.jit.incore
def scale_kernel(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    pl.store(pl.muls(pl.load(x, [0, 0], [16, 32]), 2.0), [0, 0], y)


@pl.jit.incore
def shift_kernel(y: pl.Tensor, z: pl.Out[pl.Tensor]):
    pl.store(pl.adds(pl.load(y, [0, 0], [16, 32]), 1.0), [0, 0], z)


@pl.jit
def kernels_in_a_manual_scope(x: pl.Tensor, y: pl.Out[pl.Tensor], z: pl.Out[pl.Tensor], chained: bool):
    with pl.manual_scope():
        if chained:  # z reads the y the first kernel writes: no deps= can order two plain calls
            scale_kernel(x, y)
            shift_kernel(y, z)
        else:
            scale_kernel(x, y)
            shift_kernel(x, z)


@pl.jit
def kernel_then_region(x: pl.Tensor, y: pl.Out[pl.Tensor], z: pl.Out[pl.Tensor]):
    with pl.manual_scope():
        scale_kernel(x, y)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="read_y"):
            z[:, :] = pl.adds(y[:, :], 1.0)


def test_plain_kernel_calls_in_a_manual_scope_are_race_checked():
    x = np.random.default_rng(65).standard_normal((16, 32)).astype(np.float32)
    y, z = np.zeros_like(x), np.zeros_like(x)
    kernels_in_a_manual_scope(x, y, z, False)  # disjoint data: no edge needed
    np.testing.assert_allclose(y, 2 * x, rtol=1e-6)
    np.testing.assert_allclose(z, x + 1, rtol=1e-6)
    with pytest.raises(PyptoError, match=r"race: task 'shift_kernel' and task 'scale_kernel' .* tensor 'y'"):
        kernels_in_a_manual_scope(x, y, z, True)
    with pytest.raises(PyptoError, match=r"race: task 'read_y' and task 'scale_kernel'"):
        kernel_then_region(x, y, z)


@pl.jit
def kernels_ordered_by_spmd_deps(x: pl.Tensor, y: pl.Out[pl.Tensor], z: pl.Out[pl.Tensor]):
    with pl.manual_scope():
        with pl.spmd(1) as t1:
            scale_kernel(x, y)
        with pl.spmd(1, deps=[t1]):
            shift_kernel(y, z)


def test_kernel_calls_launched_with_deps_run_in_order():
    x = np.random.default_rng(66).standard_normal((16, 32)).astype(np.float32)
    y, z = np.zeros_like(x), np.zeros_like(x)
    kernels_ordered_by_spmd_deps(x, y, z)
    np.testing.assert_allclose(z, 2 * x + 1, rtol=1e-6)
