"""Explicit pipe objects (``initialize_l2g2l_pipe`` through GM slots, ``initialize_l2l_pipe``) with
``declare_tile`` + ``tpush`` / ``tpop`` / ``tfree``, checked against NumPy, and FIFO slot misuse
found on either kind of FIFO: a read of a freed slot, a local slot overwritten before it is freed,
a slot past the end of its reserve_buffer."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pyptoemu
from pyptoemu import KernelFault

from .pipe_kernels import SLOT, c2v_pipe

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
RNG = np.random.default_rng(11)


def _inputs(blocks: int, tiles: int, slot_num: int = 4) -> dict:
    a = RNG.standard_normal((blocks * tiles * 32, 32)).astype(np.float16)
    b = RNG.standard_normal((32, 32)).astype(np.float16)
    ws = np.zeros(blocks * slot_num * SLOT // 4, np.float32)
    return {"arg0": a, "arg1": b, "arg3": ws}


def _reference(inputs: dict, blocks: int, tiles: int) -> np.ndarray:
    a = inputs["arg0"].astype(np.float32).reshape(blocks * tiles, 32, 32)
    return (0.5 * (a @ inputs["arg1"].astype(np.float32))).reshape(-1, 32)


def _misuse(kernel: str, inputs: dict, blocks: int = 1) -> list[str]:
    with pytest.raises(KernelFault) as info:
        pyptoemu.run(kernel, inputs=inputs, args={"arg4": blocks}, blocks=blocks)
    return [f.message for f in info.value.findings if f.kind == "fifo-misuse" and f.severity == "error"]


@pytest.mark.parametrize("staged", [True, False], ids=["l2g2l", "l2l"])
def test_explicit_c2v_pipe_matches_numpy_over_blocks(staged):
    blocks, tiles = 2, 5  # more tiles than GM slots (4) and local slots (2): slots are reused
    inputs = _inputs(blocks, tiles)
    r = pyptoemu.run(c2v_pipe(tiles, staged=staged), inputs=inputs, args={"arg4": blocks}, blocks=blocks,
                     keep_log=True)
    assert r.findings == []
    np.testing.assert_allclose(r.outputs["arg2"].reshape(-1, 32), _reference(inputs, blocks, tiles), rtol=1e-5)
    pops = [i for c in r.chip.cores if c.kind.name == "aiv" for i in c.trace_log if i.name == "tpop" and i.pipe == "MTE2"]
    assert len(pops) == 2 * blocks * tiles  # every pop is a slot load on its vector core's MTE2
    if staged:  # block 1's GM slots hold its tiles: the last push went to slot (tiles - 1) % 4
        ws = r.outputs["arg3"].reshape(blocks, 4, 32, 32)
        np.testing.assert_allclose(0.5 * ws[1, (tiles - 1) % 4], _reference(inputs, blocks, tiles)[-32:], rtol=1e-5)


def test_reading_a_popped_tile_after_tfree_is_fifo_misuse():
    msgs = _misuse(c2v_pipe(3, free_late=True), _inputs(1, 3))
    assert any("reads UB bytes" in m and "already released" in m for m in msgs)


def test_popping_into_a_local_slot_whose_tile_was_never_freed_is_fifo_misuse():
    msgs = _misuse(c2v_pipe(3, no_free=True, local_slot_num=2), _inputs(1, 3))
    assert any("overwrites local slot 0" in m and "not freed yet" in m for m in msgs)


def test_a_reserve_smaller_than_its_slots_is_fifo_misuse():
    # each vector core keeps half of a split slot: 4 local slots of 2048 bytes need 8192
    msgs = _misuse(c2v_pipe(3, staged=False, reserve_slots=1), _inputs(1, 3))
    assert any("lies past the end of its reserve_buffer" in m and "2048 x 4 = 8192" in m for m in msgs)


def test_aic_aiv_fifo_read_after_free_is_fifo_misuse():
    text = (EXAMPLES / "matmul_c2v_epilogue.pto").read_text()
    free = "    pto.tfree_from_aic {split = 1}\n"
    first_use = "    pto.tmaxs ins(%t, %zero"
    assert free in text and first_use in text
    text = text.replace(free, "").replace(first_use, free + first_use)  # free before the slot's only read
    a = RNG.standard_normal((32, 32)).astype(np.float16)
    with pytest.raises(KernelFault) as info:
        pyptoemu.run(text, inputs={"arg0": a, "arg1": a}, args={"arg3": 32})
    assert any(f.kind == "fifo-misuse" and "tmaxs reads UB bytes" in f.message for f in info.value.findings)


def test_a_declared_tile_used_before_any_tpop_is_a_located_fault():
    use = ("pto.tadds ins(%t, %zero : !pto.tile_buf<vec, 16x32xf32>, f32) outs(%r2 : !pto.tile_buf<vec, 16x32xf32>)\n"
           "      pto.tpop(%t, %p")
    text = c2v_pipe(2).replace("pto.tpop(%t, %p", use, 1)
    with pytest.raises(KernelFault, match="declare_tile handle %t has no storage until a tpop binds it"):
        pyptoemu.run(text, inputs=_inputs(1, 2), args={"arg4": 1})


def test_a_gm_slot_buffer_too_small_for_its_slots_is_a_bounds_fault():
    text = c2v_pipe(6).replace("slot_num = 4", "slot_num = 8")  # 8 slots in a workspace view of 4
    with pytest.raises(KernelFault, match="GM slot buffer over arg3 is too small for slot 4"):
        pyptoemu.run(text, inputs=_inputs(1, 6), args={"arg4": 1})
