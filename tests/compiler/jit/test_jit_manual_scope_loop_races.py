"""A task written in a loop inside pl.manual_scope() runs once per trip; trips that write the same
elements with no deps= path between them race on hardware (spec pypto-jit §9), which program order
hid: the loop below ran with exit 0. It is reported at the task's line; trips chained through a
pl.array of TaskIds, a window that moves with the loop, and a loop of one trip are not races."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import PyptoError


@pl.jit
def same_window_every_trip(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.manual_scope():
        for _ in pl.range(2):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="again"):
                y[:, :] = pl.add(x, 1.0)


@pl.jit
def accumulate_unchained(x: pl.Tensor, acc: pl.InOut[pl.Tensor], n: int):
    with pl.manual_scope():
        for i in pl.range(n):
            xi = x[i * 8:(i + 1) * 8, :]
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="acc"):
                acc[:, :] = pl.add(acc, xi)


@pl.jit
def accumulate_chained(x: pl.Tensor, acc: pl.InOut[pl.Tensor], n: int):
    tids = pl.array.create(n + 1, pl.TASK_ID)
    x0 = x[0:8, :]
    with pl.manual_scope():
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="first") as t0:
            acc[:, :] = pl.add(acc, x0)
        tids[0] = t0
        for i in pl.range(1, n):
            xi = x[i * 8:(i + 1) * 8, :]
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="acc", deps=[tids[i - 1]]) as ti:
                acc[:, :] = pl.add(acc, xi)
            tids[i] = ti


@pl.jit
def moving_window(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.manual_scope():
        for i in pl.range(4):
            xi = x[i * 8:(i + 1) * 8, :]
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="rows"):
                y[i * 8:(i + 1) * 8, :] = pl.exp(xi)


def _x() -> np.ndarray:
    return np.random.default_rng(31).standard_normal((32, 16)).astype(np.float32)


def test_trips_writing_the_same_window_race_at_the_tasks_line():
    x = _x()
    with pytest.raises(PyptoError, match="race: task 'again' runs once per trip of this loop") as info:
        same_window_every_trip(x, np.zeros_like(x))
    assert f"{__file__}:{same_window_every_trip.__wrapped__.__code__.co_firstlineno + 4}:" in str(info.value)
    with pytest.raises(PyptoError, match="race: task 'acc' runs once per trip"):
        accumulate_unchained(x, np.zeros((8, 16), np.float32), 4)


def test_chained_trips_moving_windows_and_single_trips_run():
    x = _x()
    acc = np.ones((8, 16), np.float32)
    accumulate_chained(x, acc, 4)
    np.testing.assert_allclose(acc, 1 + x.reshape(4, 8, 16).sum(0), rtol=1e-5)
    y = np.zeros_like(x)
    moving_window(x, y)
    np.testing.assert_allclose(y, np.exp(x), rtol=1e-6)
    acc = np.zeros((8, 16), np.float32)
    accumulate_unchained(x, acc, 1)  # one trip: nothing to race with
    np.testing.assert_allclose(acc, x[:8], rtol=1e-6)
