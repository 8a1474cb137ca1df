"""The chip examples against NumPy: SPMD over 48 vector cores (and waves beyond), cube -> vector
through a C2V FIFO, vector -> cube through a V2C FIFO, split-K with atomic adds from many cores."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pyptoemu

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
RNG = np.random.default_rng(7)


def test_spmd_vector_add_over_48_blocks_uses_48_vector_cores():
    n = 16 * 48 * 2
    x = RNG.standard_normal((n, 64)).astype(np.float32)
    y = RNG.standard_normal((n, 64)).astype(np.float32)
    r = pyptoemu.run(EXAMPLES / "vadd_spmd.pto", inputs={"arg0": x, "arg1": y}, args={"arg3": n}, blocks=48)
    np.testing.assert_array_equal(r.outputs["arg2"].reshape(n, 64), x + y)
    assert [c.id for c in r.cores] == [f"AIV{i}" for i in range(48)]
    assert sorted(b for c in r.cores for b in c.blocks) == list(range(48))
    assert r.findings == []
    one = pyptoemu.run(EXAMPLES / "vadd_spmd.pto", inputs={"arg0": x[:32], "arg1": y[:32]}, args={"arg3": 32})
    # every block does the work of the one-block run, all at once: 48x the pipe work, and a makespan
    # no shorter than one block's (longer only by what sharing HBM/L2 costs)
    assert r.pipes["V"].busy_cycles == 48 * one.pipes["V"].busy_cycles
    assert one.cycles <= r.cycles < 2 * one.cycles


def test_more_blocks_than_cores_run_in_waves_on_the_cores_that_free_first():
    n = 16 * 50
    x = RNG.standard_normal((n, 64)).astype(np.float32)
    y = RNG.standard_normal((n, 64)).astype(np.float32)
    r = pyptoemu.run(EXAMPLES / "vadd_spmd.pto", inputs={"arg0": x, "arg1": y}, args={"arg3": n}, blocks=50, keep_log=True)
    np.testing.assert_array_equal(r.outputs["arg2"].reshape(n, 64), x + y)
    assert len(r.cores) == 48
    waves = {c.id: c.blocks for c in r.cores if len(c.blocks) > 1}
    assert waves == {"AIV0": [0, 48], "AIV1": [1, 49]}
    aiv0 = r.chip.cores[0]
    first = max(i.done for i in aiv0.trace_log if aiv0.block_of(i) == 0)
    second = min(i.start for i in aiv0.trace_log if aiv0.block_of(i) == 48)
    assert second >= first  # block 48 waited for a free core
    assert r.cycles == max(c.cycles for c in r.cores) > max(c.cycles for c in r.cores if len(c.blocks) == 1)


def test_cube_to_vector_epilogue_through_c2v_fifo():
    blocks = 4
    a = RNG.standard_normal((32 * blocks, 32)).astype(np.float16)
    b = RNG.standard_normal((32, 32)).astype(np.float16)
    r = pyptoemu.run(EXAMPLES / "matmul_c2v_epilogue.pto", inputs={"arg0": a, "arg1": b},
                     args={"arg3": 32 * blocks}, blocks=blocks, keep_log=True)
    want = 0.5 * np.maximum(a.astype(np.float32) @ b.astype(np.float32), 0)
    np.testing.assert_allclose(r.outputs["arg2"].reshape(-1, 32), want, rtol=1e-3, atol=1e-3)
    assert r.findings == [] and r.notices == []
    kinds = [(c.id, c.kind, c.blocks) for c in r.cores]
    assert kinds[:3] == [("AIC0", "aic", [0]), ("AIV0", "aiv", [0]), ("AIV1", "aiv", [0])]
    assert len(kinds) == 3 * blocks
    # the AIVs run concurrently with the cube core, not after it
    aic0 = r.chip.cores[0]
    push = next(i for i in aic0.trace_log if i.name == "tpush_to_aiv" and i.kind == 0)
    assert all(c.cycles > push.done for c in r.cores[1:3])
    aiv0 = r.chip.cores[1]
    pop = next(i for i in aiv0.trace_log if i.name == "tpop_from_aic")
    # the vector core was already waiting on its empty FIFO while the cube core computed
    assert pop.wait_start < push.start and pop.start >= push.done and pop.released_by == [push]


def test_vector_to_cube_through_v2c_fifo():
    blocks = 3
    a = RNG.standard_normal((32 * blocks, 32)).astype(np.float16)
    b = RNG.standard_normal((32, 32)).astype(np.float16)
    r = pyptoemu.run(EXAMPLES / "v2c_scale_matmul.pto", inputs={"arg0": a, "arg1": b},
                     args={"arg3": 32 * blocks}, blocks=blocks)
    want = (2 * a.astype(np.float32)) @ b.astype(np.float32)
    np.testing.assert_allclose(r.outputs["arg2"].reshape(-1, 32), want, rtol=2e-3, atol=1e-2)
    assert r.findings == []


@pytest.mark.parametrize("blocks", [1, 8, 30])
def test_split_k_matmul_blocks_atomic_add_into_one_output(blocks: int):
    a = RNG.standard_normal((32, 32 * blocks)).astype(np.float16)
    b = RNG.standard_normal((32 * blocks, 32)).astype(np.float16)
    c0 = RNG.standard_normal((32, 32)).astype(np.float32)
    r = pyptoemu.run(EXAMPLES / "matmul_splitk_atomic.pto", inputs={"arg0": a, "arg1": b, "arg2": c0},
                     args={"arg3": 32 * blocks}, blocks=blocks)
    want = c0 + a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(r.outputs["arg2"].reshape(32, 32), want, rtol=1e-3, atol=2e-3 * blocks)
    assert r.findings == []  # concurrent atomic adds do not race each other
    assert len(r.cores) == min(blocks, 24) and {c.kind for c in r.cores} == {"aic"}


def test_split_k_with_a_plain_store_is_a_race_between_blocks():
    text = (EXAMPLES / "matmul_splitk_atomic.pto").read_text()
    plain = text.replace(" {atomicType = #pto<atomic_type atomic_add>}", "")
    assert plain != text
    a = RNG.standard_normal((32, 64)).astype(np.float16)
    b = RNG.standard_normal((64, 32)).astype(np.float16)
    r = pyptoemu.run(plain, inputs={"arg0": a, "arg1": b, "arg2": np.zeros((32, 32), np.float32)},
                     args={"arg3": 64}, blocks=2, races="warn")
    races = [f for f in r.findings if f.kind == "race"]
    assert len(races) == 1 and races[0].detail["cross_core"] and races[0].detail["kind"] == "WAW"
    assert "AIC0 FIX, block 0" in races[0].message and "AIC1 FIX, block 1" in races[0].message


def test_atomic_add_racing_a_plain_read_of_another_core_is_reported():
    text = (EXAMPLES / "matmul_splitk_atomic.pto").read_text()
    # block 1 stores plainly while block 0 adds atomically: a plain access racing an atomic one
    mixed = text.replace(
        "{atomicType = #pto<atomic_type atomic_add>}",
        "{atomicType = #pto<atomic_type atomic_add>}\n    %one = arith.constant 1 : index\n"
        "    %isb1 = arith.cmpi eq, %blk, %one : index\n    scf.if %isb1 {\n"
        "      pto.tstore ins(%acc : !pto.tile_buf<acc, 32x32xf32, blayout=col_major, slayout=row_major, "
        "fractal=1024>) outs(%pc : !pto.partition_tensor_view<32x32xf32>)\n    }")
    a = RNG.standard_normal((32, 64)).astype(np.float16)
    b = RNG.standard_normal((64, 32)).astype(np.float16)
    r = pyptoemu.run(mixed, inputs={"arg0": a, "arg1": b, "arg2": np.zeros((32, 32), np.float32)},
                     args={"arg3": 64}, blocks=2, races="warn")
    races = [f for f in r.findings if f.kind == "race" and f.detail["cross_core"]]
    assert races and "an atomic add, the other not" in races[0].message
