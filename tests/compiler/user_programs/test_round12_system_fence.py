"""``pl.system.fence()`` and ``pl.system.cacheinvalid()`` (spec pypto-jit §8: cache upkeep, "in a
sequential emulator the cache ops are no-ops") in InCore code, between a store and a load of the same
tensor. Red team 12 found both unknown ops."""

from __future__ import annotations

import numpy as np

import pypto.language as pl


@pl.jit
def store_fence_reload(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    """y = (x + 1) * 2, going through y in GM between the two steps, fenced."""
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="fenced"):
        pl.store(pl.adds(pl.load(x, [0, 0], [8, 32]), 1.0), [0, 0], y)
        pl.system.fence()
        pl.system.cacheinvalid()
        pl.store(pl.muls(pl.load(y, [0, 0], [8, 32]), 2.0), [0, 0], y)


def test_fence_and_cacheinvalid_run_and_order_the_reload_after_the_store():
    x = np.random.default_rng(26).standard_normal((8, 32)).astype(np.float32)
    y = np.zeros_like(x)
    store_fence_reload(x, y)
    np.testing.assert_array_equal(y, (x + 1) * 2)
    assert "pto.barrier <PIPE_ALL>" in store_fence_reload.compile(x, y).pto["fenced"]
