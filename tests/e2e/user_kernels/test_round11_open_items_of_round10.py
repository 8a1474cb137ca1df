"""Eleventh red-team round, part 1: what round 10 left open, each decided from the spec and pinned
(kernels/r11_*.pto; the first lines of each say what is wrong or what it checks, and what the
emulator did before)."""

from __future__ import annotations

import numpy as np
import pytest

import pyptoemu
from ptoisa.errors import PtoError
from pyptoemu.errors import KernelFault
from tests.e2e.user_kernels.running import KERNELS, cli_json, message_lines, run_clean


def test_gather_mask_form_keeps_each_row_in_its_own_destination_row():
    x = np.random.default_rng(11).standard_normal((4, 8)).astype(np.float32)
    r = run_clean("r11_k01_gather_mask_rows_padded.pto", {"arg0": x})
    np.testing.assert_array_equal(r.outputs["arg1"].reshape(4, 4), x[:, 0::2])
    np.testing.assert_array_equal(r.outputs["arg2"].reshape(4, 4), x[:, 1::2])


def test_a_view_written_at_a_use_with_another_type_than_it_has_is_refused(tmp_path):
    name = "r11_bad01_view_type_at_use.pto"
    code, out = cli_json(name, {}, tmp_path)
    assert code == 2, out
    assert message_lines(out, name) == [
        "15:5: pto.partition_view: %vy is a !pto.tensor_view<?x?xf32> but written here as !pto.tensor_view<?x?xf16>",
        ("17:5: pto.tload: %px is a !pto.partition_tensor_view<16x64xf32> but written here as "
         "!pto.partition_tensor_view<8x64xf32>"),
        ("19:5: pto.tstore: %py is a !pto.partition_tensor_view<16x64xf32> but written here as "
         "!pto.partition_tensor_view<16x64xf16>"),
    ], out


def test_a_dynamic_dim_at_a_use_or_in_the_view_matches_any_size():
    x = np.random.default_rng(12).standard_normal((16, 64)).astype(np.float32)
    r = run_clean("r11_k02_view_types_dynamic_at_use.pto", {"arg0": x}, {"arg3": 5})
    np.testing.assert_array_equal(r.outputs["arg1"].reshape(16, 64)[:5], x[:5] + 1)
    np.testing.assert_array_equal(r.outputs["arg2"].reshape(16, 64), x * 2)


def test_a_flag_from_a_pipe_to_itself_is_refused_saying_to_use_a_barrier(tmp_path):
    name = "r11_bad02_flag_pipe_to_itself.pto"
    code, out = cli_json(name, {}, tmp_path)
    assert code == 2, out
    said = ("a flag from PIPE_{p} to itself: a flag orders two different pipes; ops of one pipe are ordered by "
            "pto.barrier <PIPE_{p}>")
    assert message_lines(out, name) == [
        f"21:5: pto.set_flag: {said.format(p='V')}",
        f"22:5: pto.wait_flag: {said.format(p='V')}",
        f"27:5: pto.record_event: {said.format(p='MTE3')}",
        f"28:5: pto.wait_event: {said.format(p='MTE3')}",
    ], out


def test_an_index_as_a_tile_address_is_refused_before_running(tmp_path):
    name = "r11_bad03_index_as_tile_addr.pto"
    code, out = cli_json(name, {}, tmp_path)
    assert code == 2, out
    assert message_lines(out, name) == [
        ("16:5: pto.alloc_tile: the address %c8192 is index; a tile address is an i64 byte offset (convert it "
         "first, e.g. arith.index_cast %c8192 : index to i64)"),
        ("20:7: pto.alloc_tile: the address %a is index; a tile address is an i64 byte offset (convert it first, "
         "e.g. arith.index_cast %a : index to i64)"),
    ], out


def test_a_run_time_i64_tile_address_runs_and_is_checked_for_alignment_and_capacity_where_used(tmp_path):
    name = "r11_k03_i64_tile_addr_from_loop.pto"
    x = np.random.default_rng(13).standard_normal((64, 64)).astype(np.float32)
    r = run_clean(name, {"arg0": x}, {"arg2": 2048})
    np.testing.assert_array_equal(r.outputs["arg1"].reshape(64, 64), x + 1)
    for step, said in ((100, "%t: address 100 in UB is not a multiple of its 32-byte alignment"),
                       (1 << 20, "%t: 2048 bytes at address 1048576 exceed UB capacity of 196608 bytes")):
        code, out = cli_json(name, {"arg2": step}, tmp_path)
        assert code == 1, out
        assert f"{name}:20:7: {said}" in out and '"status": "faulted"' in out and '"outputs": {}' in out, out


def test_an_event_id_out_of_range_at_run_time_stops_the_run_without_outputs(tmp_path):
    name = "r11_k04_dyn_event_id_from_arg.pto"
    x = np.random.default_rng(14).standard_normal((16, 64)).astype(np.float32)
    r = run_clean(name, {"arg0": x}, {"arg2": 7})
    np.testing.assert_array_equal(r.outputs["arg1"].reshape(16, 64), 2 * x)
    code, out = cli_json(name, {"arg2": 9}, tmp_path)
    assert code == 1, out
    assert f"{name}:17:5: set_flag_dyn: event id 9 is outside the machine's range 0..7" in out, out
    assert '"status": "faulted"' in out and '"outputs": {}' in out and not list(tmp_path.rglob("*.npy")), out
    with pytest.raises(KernelFault, match="event id 9") as e:
        pyptoemu.run(KERNELS / name, inputs={"arg0": x}, args={"arg2": 9})
    assert e.value.result.status == "faulted"
    assert not e.value.result.outputs


def test_a_mat_to_left_move_that_changes_the_element_type_is_refused_at_the_move(tmp_path):
    name = "r11_bad04_tmov_mat_f16_to_left_f32.pto"
    code, out = cli_json(name, {}, tmp_path)
    assert code == 2, out
    lines = message_lines(out, name)
    assert lines[0] == ("22:3: pto.tmov: mat f16 -> left f32: a move out of mat copies elements unchanged (only a "
                        "move out of acc converts); give both tiles one element type"), out
    assert lines[1].startswith("24:3: pto.tmatmul: (a, b, c) have element types (f32, f16, f32)"), out
    with pytest.raises(PtoError, match="copies elements unchanged"):
        pyptoemu.run(KERNELS / name)
