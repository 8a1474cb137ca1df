"""``deps=[tids[i - 1]]``: an element of a pl.array of pl.TASK_ID names a dependency (a chain of tasks
in a loop, as pypto-lib models write it). It ended in "TypeError: 'TaskArray' object is not
subscriptable"; an element read before any TaskId was stored, or past the array, is a located error."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import PyptoError


@pl.jit
def doubling_chain(x: pl.Tensor, y: pl.InOut[pl.Tensor]):
    tids = pl.array.create(4, pl.TASK_ID)
    with pl.manual_scope():
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="first") as t0:
            y[:, :] = pl.add(y, x)
        tids[0] = t0
        for i in pl.range(1, 4):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="step", deps=[tids[i - 1]]) as ti:
                y[:, :] = pl.mul(y, 2.0)
            tids[i] = ti


@pl.jit
def read_before_store(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    tids = pl.array.create(2, pl.TASK_ID)
    with pl.manual_scope(), pl.at(level=pl.Level.CORE_GROUP, deps=[tids[0]]):
        y[:, :] = pl.exp(x)


@pl.jit
def index_past_the_array(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    tids = pl.array.create(2, pl.TASK_ID)
    with pl.manual_scope():
        with pl.at(level=pl.Level.CORE_GROUP) as t0:
            y[:, :] = pl.exp(x)
        tids[0] = t0
        with pl.at(level=pl.Level.CORE_GROUP, deps=[tids[2]]):
            y[:, :] = pl.exp(y)


def test_chain_through_array_elements_runs_in_order():
    rng = np.random.default_rng(12)
    x = rng.standard_normal((16, 32)).astype(np.float32)
    y0 = rng.standard_normal((16, 32)).astype(np.float32)
    y = y0.copy()
    doubling_chain(x, y)
    np.testing.assert_allclose(y, (y0 + x) * 8, rtol=1e-6)


def test_bad_element_reads_are_located():
    x = np.zeros((16, 32), np.float32)
    with pytest.raises(PyptoError, match="read before any TaskId was stored") as info:
        read_before_store(x, np.zeros_like(x))
    assert f"{__file__}:{read_before_store.__wrapped__.__code__.co_firstlineno + 3}:" in str(info.value)
    with pytest.raises(PyptoError, match="index 2 is outside the pl.array of 2 TaskIds"):
        index_past_the_array(x, np.zeros_like(x))
