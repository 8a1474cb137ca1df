"""The manual-scope race check sees through views (spec pypto-jit §9, emulator semantics (2)): an
access through a view is an access to a window of its base tensor, so a race through a view of the
same base is reported, and tasks writing disjoint windows of one tensor are not a race."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import PyptoError


@pl.jit
def race_through_a_view(x: pl.Tensor, y: pl.Out[pl.Tensor], z: pl.Out[pl.Tensor]):
    top = y[0:8, :]
    with pl.manual_scope():
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="fill_top"):
            top[:, :] = pl.muls(x[0:8, :], 2.0)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="read_y"):
            z[:, :] = pl.adds(y[:, :], 1.0)


@pl.jit
def disjoint_windows(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    top = y[0:8, :]
    bottom = y[8:16, :]
    with pl.manual_scope():
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="fill_top"):
            top[:, :] = pl.muls(x[0:8, :], 2.0)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="fill_bottom"):
            bottom[:, :] = pl.muls(x[8:16, :], 3.0)


@pl.jit
def overlapping_windows_of_two_views(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    upper = y[0:12, :]
    lower = y[8:16, :]
    with pl.manual_scope():
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="fill_upper"):
            upper[:, :] = pl.muls(x[0:12, :], 2.0)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="fill_lower"):
            lower[:, :] = pl.muls(x[8:16, :], 3.0)


@pl.jit
def disjoint_columns_of_one_tensor(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.manual_scope():
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="left"):
            y[:, 0:16] = pl.muls(x[:, 0:16], 2.0)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="right"):
            y[:, 16:32] = pl.muls(x[:, 16:32], 3.0)


def _x() -> np.ndarray:
    return np.random.default_rng(31).standard_normal((16, 32)).astype(np.float32)


def test_a_write_through_a_view_races_with_a_read_of_its_base():
    x = _x()
    with pytest.raises(PyptoError, match=r"race: task 'read_y' and task 'fill_top'.*tensor 'y'"):
        race_through_a_view(x, np.zeros_like(x), np.zeros_like(x))


def test_overlapping_windows_of_two_views_race():
    x = _x()
    with pytest.raises(PyptoError, match=r"race: task 'fill_lower' and task 'fill_upper'.*tensor 'y'"):
        overlapping_windows_of_two_views(x, np.zeros_like(x))


def test_disjoint_views_of_one_tensor_do_not_race():
    x = _x()
    y = np.zeros_like(x)
    disjoint_windows(x, y)
    np.testing.assert_allclose(y, np.concatenate([2 * x[:8], 3 * x[8:]]), rtol=1e-6)


def test_disjoint_column_windows_of_one_tensor_do_not_race():
    x = _x()
    y = np.zeros_like(x)
    disjoint_columns_of_one_tensor(x, y)
    np.testing.assert_allclose(y, np.concatenate([2 * x[:, :16], 3 * x[:, 16:]], axis=1), rtol=1e-6)
