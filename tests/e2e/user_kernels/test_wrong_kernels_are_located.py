"""Second red-team round: subtly wrong kernels (tests/e2e/user_kernels/kernels/bad*.pto, the first
line of each says what is wrong) - races between blocks and between cube and vector cores, missing
cross-core waits, windows past the end, capacity, A5-only ops and dtypes on A2/A3, FIFO misuse in
every form. Each must stop with exit 1 (the kernel faulted) or 2 (bad input) and a message at the
line and column of the culprit, on the command line and through ``pyptoemu.run``; never a traceback,
never exit 0 with a wrong number.
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import numpy as np
import pytest

import pyptoemu
from pyptoemu.cli import main
from pyptoemu.errors import PtoError

KERNELS = Path(__file__).resolve().parent / "kernels"
N16 = {"arg2": 16}

# kernel, scalar args, inputs, blocks, exit code, "line:col" of the culprit, fragment of its message
CASES = [
    ("bad01_spmd_blocks_store_one_window.pto", {"arg2": 48}, {}, 3, 1, "18:5", "WAW on arg1 bytes [0, 4096) between cores"),
    ("bad02_spmd_tail_window_past_end.pto", {"arg2": 40}, {}, 3, 1, "14:5", "window [32, 48) is outside the view's size 40"),
    ("bad03_ub_overflow_level2.pto", N16, {}, 1, (1, 2), "24:5", "%t12 needs 16384 bytes but UB (vec) has only 0"),
    ("bad04_level3_wait_after_store.pto", N16, {}, 1, 1, "21:5", "RAW on UB bytes [4096, 8192)"),
    ("bad06_tcvt_f16_to_bf16_on_a3.pto", N16, {}, 1, 2, "15:5", "does not convert f16 to bf16"),
    ("bad07_mrgsort_blocklen_32.pto", N16, {}, 1, (1, 2), "16:5", "blockLen must be a positive multiple of 64, got 32"),
    ("bad08_store_scalar_past_input.pto", N16, {"arg1": np.zeros((16, 64), np.float32)}, 1, 1, "13:5",
     "element 1024 outside arg1"),
    ("bad09_level3_tile_past_ub.pto", N16, {}, 1, (1, 2), "12:5", "4096 bytes at address 194560 exceed UB capacity"),
    ("bad10_trandom_on_a3.pto", {}, {}, 1, 2, "13:5", "pto.trandom exists only on a5"),
    ("bad11_tgetval_past_tile.pto", N16, {}, 1, 2, "15:5",  # a constant offset: refused before running (round 13)
     "pto.tgetval: offset 1024 outside the 16x64 tile %t (1024 elements)"),
    ("bad12_set_validshape_past_tile.pto", N16, {}, 1, 1, "13:5", "set_validshape 32x64 outside tile shape 16x64"),
    ("bad13_for_step_zero.pto", N16, {}, 1, (1, 2), "13:5", "scf.for step must be positive, got 0"),
    ("bad14_entry_returns_value.pto", {"arg0": 3}, {}, 1, 2, "3:3", "returns a value (index)"),
    ("bad15_divsi_by_zero.pto", N16, {}, 1, 1, "12:5", "arith.divsi: division by zero"),
    ("bad16_a5_dtypes_on_a3.pto", {}, {}, 1, 2, "30:5", "pto.tadd: destination element type bf16 is not supported"),
    ("bad17_two_way_reserve_too_small.pto", {"arg3": 6, "arg4": 0.5}, {}, 1, 1, "24:7",
     "lies past the end of its reserve_buffer (8192 bytes"),
    ("bad18_pop_never_pushed.pto", {"arg3": 20}, {}, 1, 1, "44:5", "no push into this FIFO ever ran (AIC0 never pushes)"),
    ("bad19_push_larger_than_slot.pto", {"arg3": 20}, {}, 1, 1, "27:5", "the tile is 4096 bytes but a C2V slot holds 2048"),
    ("bad20_free_without_pop.pto", {"arg3": 20}, {}, 1, 1, "53:5", "a free without a pop"),
    ("bad21_push_to_aiv_from_vector.pto", {"arg3": 20}, {}, 1, 2, "53:5", "tpush_to_aiv: no pipe for src 'vec'"),
    ("bad22_pop_whole_of_split_tile.pto", {}, {}, 1, 1, "47:5",
     "the C2V tile delivered here is 32x32 (split = 2: each vector core has half the columns)"),
    ("bad23_pop_valid_past_half.pto", {"arg3": 20}, {}, 1, 1, "45:5", "the C2V tile is 16x32 (valid 20x32)"),
    ("bad24_read_slot_after_free.pto", {"arg3": 20}, {}, 1, 1, "51:7", "of a FIFO slot that tfree at"),
    ("bad25_split0_popped_by_both.pto", {}, {}, 1, 1, "47:5", "{split = 0} on sub-block 1"),
    ("bad26_missing_sync_wait.pto", {"arg4": 2}, {}, 2, 1, "67:5", "between cores: tload (AIV0 MTE2"),
    ("bad27_sync_wait_wrong_id.pto", {"arg4": 2}, {}, 2, 1, "67:5", "sync.wait for cross-core signal id 1 from AIC0, which never sets it"),
    ("bad28_plain_store_races_atomics.pto", {}, {}, 3, 1, "33:7", "WAW on arg1 bytes [0, 2048) between cores"),
    # found by the red team (were a deadlock, or exit 0): the reserve/import pairing is checked before running
    ("bad30_import_name_not_reserved.pto", {"arg3": 20}, {}, 1, 2, "11:5", '@epi has no reserve_buffer named "rings"'),
    ("bad31_import_peer_missing.pto", {"arg3": 20}, {}, 1, 2, "11:5", "peer_func @nothere is not a function"),
    ("bad32_two_reserves_one_function.pto", {"arg3": 20}, {}, 1, 2, "37:5",
     'reserve_buffer: @epi already reserves "ring2"'),
    ("bad33_slot_size_differs.pto", {"arg3": 20}, {}, 1, 2, "12:5", "C2V FIFO initialised here with slot_size 8192"),
]


def _argv(name, args, inputs, blocks, tmp_path) -> list[str]:
    argv = ["run", "-q", str(KERNELS / name), "--output-dir", str(tmp_path / "out"), "--blocks", str(blocks)]
    for k, v in args.items():
        argv += ["--arg", f"{k}={v}"]
    for k, v in inputs.items():
        np.save(tmp_path / f"{k}.npy", v)
        argv += ["--input", f"{k}={tmp_path / k}.npy"]
    return argv


def _cli(argv: list[str]) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, err.getvalue() + out.getvalue()


@pytest.mark.parametrize(("name", "args", "inputs", "blocks", "code", "where", "fragment"), CASES,
                         ids=[c[0].split("_")[0] for c in CASES])
def test_wrong_kernel_stops_at_its_line(name, args, inputs, blocks, code, where, fragment, tmp_path):
    got, text = _cli(_argv(name, args, inputs, blocks, tmp_path))
    assert got in (code if isinstance(code, tuple) else (code,)), text
    assert "Traceback" not in text and "internal error" not in text
    located = [line for line in text.splitlines() if f"{name}:{where}:" in line]
    assert any(fragment in line for line in located), text
    with pytest.raises(PtoError) as info:
        pyptoemu.run(KERNELS / name, inputs=inputs, args=args, blocks=blocks, max_steps=1000)
    assert f"{name}:{where}:" in str(info.value) and fragment in str(info.value)


def test_endless_while_stops_at_the_step_limit_with_its_line(tmp_path):
    name = "bad05_while_counter_stuck.pto"
    code, text = _cli([*_argv(name, N16, {}, 1, tmp_path), "--max-steps", "1000"])
    assert code == 1
    assert f"{name}:11:5: the kernel ran more than 1000 loop iterations" in text


def test_mrgsort_format2_corpus_form_with_exec_out_merges():
    """Red team: the corpus form of tmrgsort format 2, outs(%d, %exec), was refused ('operand of
    unexpected kind ndarray'). It merges; %exec (a vector<4xi16> no op can read) is accepted, and the
    trailing %tmp is the scratch operand (no uninitialised-read warning on it)."""
    rng = np.random.default_rng(29)
    vals = [np.sort(rng.standard_normal(32).astype(np.float32))[::-1] for _ in range(2)]
    records = np.zeros((2, 32, 2), np.float32)
    for k in range(2):
        records[k, :, 0] = vals[k]
        records[k, :, 1] = (np.arange(32, dtype=np.uint32) + 100 * k).view(np.float32)
    r = pyptoemu.run(KERNELS / "bad29_mrgsort_format2.pto", inputs={"arg0": records.reshape(128)})
    assert not r.findings
    got = r.outputs["arg1"].reshape(64, 2)
    order = sorted(((float(vals[k][i]), -k, i, k) for k in range(2) for i in range(32)), reverse=True)
    want = np.stack([records[k, i] for _, _, i, k in order])
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


@pytest.mark.parametrize(("flag", "want"), [(True, 3.0), (False, 2.5)])
def test_same_name_in_sibling_branches_is_two_values(flag, want):
    r = pyptoemu.run(KERNELS / "k26_sibling_branch_names.pto", inputs={"arg0": np.zeros(1, np.float32)},
                     args={"arg1": flag})
    assert r.outputs["arg0"][0] == want


def test_matmul_of_bf16_by_f16_is_rejected_at_its_line(tmp_path):
    code, text = _cli(_argv("bad34_matmul_bf16_by_f16.pto", {"arg3": 1}, {}, 1, tmp_path))
    assert code == 2
    assert "bad34_matmul_bf16_by_f16.pto:28:9: pto.tmatmul: (a, b, c) have element types (bf16, f16, f32)" in text
