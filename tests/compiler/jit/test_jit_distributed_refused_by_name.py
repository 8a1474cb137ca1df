"""Multi-card code (spec pypto-jit §12) is refused by name, not by a missing module (issue 14 item 4)."""

import importlib

import numpy as np
import pytest

import pypto.language as pl


def test_the_distributed_module_imports_and_each_name_is_refused():
    pld = importlib.import_module("pypto.language.distributed")
    for name in ("world_size", "alloc_window_buffer", "window", "DistributedTensor", "NotifyOp"):
        with pytest.raises(NotImplementedError, match=rf"pld\.{name} .*multi-card distribution.*not supported"):
            getattr(pld, name)
    with pytest.raises(NotImplementedError, match=r"pld\.allreduce"):
        from pypto.language.distributed import allreduce  # noqa: F401


def test_single_card_kernels_beside_a_pld_import_still_run():
    import pypto.language.distributed as pld  # noqa: F401  (as upstream files do)

    @pl.jit
    def add_one(x: pl.Tensor, y: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            y[:, :] = pl.add(x, 1.0)

    x = np.arange(64, dtype=np.float32).reshape(8, 8)
    y = np.zeros_like(x)
    add_one(x, y)
    np.testing.assert_array_equal(y, x + 1.0)
