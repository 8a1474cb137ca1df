"""The orchestration C++ submits an SPMD launch with its block count (a plain call as one block). The
spec's runtime API (pypto-language §6.7) has only the one-block pto2_rt_submit_task; the block-count
call is this project's name, and the generated code says so."""

from __future__ import annotations

import numpy as np

import pypto.language as pl
from pypto.codegen.orchestration import generate_orchestration


@pl.jit
def spmd_then_single(x: pl.Tensor, y: pl.Out[pl.Tensor], z: pl.Out[pl.Tensor]):
    for b in pl.spmd(4):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="rows"):
            pl.store(pl.neg(pl.load(x, [b * 8, 0], [8, 32])), [b * 8, 0], y)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="whole"):
        z[:, :] = pl.adds(x[:, :], 1.0)


def test_spmd_launch_is_submitted_with_its_block_count():
    x = np.ones((32, 32), np.float32)
    prog = spmd_then_single.lower(x, np.zeros_like(x), np.zeros_like(x))
    cpp = generate_orchestration(prog, {})["spmd_then_single"]
    assert "pto2_rt_submit_task_blocks(rt, 0, PTO2_WORKER_VECTOR, params_t0, 2, 4);" in cpp
    assert "pto2_rt_submit_task(rt, 1, PTO2_WORKER_VECTOR, params_t1, 2);" in cpp
    # the block-count form is no runtime API function (nothing defines one): the C++ says so, once
    assert cpp.count("pto2_rt_submit_task_blocks(rt, id, worker, params, n, blocks) is not a runtime function") == 1
    assert cpp.index("is not a runtime function") < cpp.index("pto2_rt_submit_task_blocks(rt, 0,")
