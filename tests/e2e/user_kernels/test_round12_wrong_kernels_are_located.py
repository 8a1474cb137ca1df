"""Twelfth red-team round: kernels with mistakes other PTO users make (kernels/r12_bad*; the first
lines of each say what is wrong and what the emulator did before). Each stops with a precise
file:line:col message and exit 1 (the kernel faulted) or 2 (bad input), never a traceback, in
bounded time and memory, and the same way in a timing-only run (``--no-data``). The endless loops
take their trip count or step from an argument, so that runs with ordinary arguments (the
fingerprints') end at once."""

from __future__ import annotations

import pytest

from tests.e2e.user_kernels.running import cli_json, message_lines


@pytest.mark.parametrize("timing", [False, True])
@pytest.mark.parametrize(("name", "code", "where", "message"), [
    ("r12_bad01_while_never_false.pto", 1, "7:5",
     "the kernel ran more than 1000 loop iterations; stopped (an endless loop? raise the limit with --max-steps)"),
    ("r12_bad02_tile_of_a_trillion_elements.pto", 2, "11:5",
     "pto.alloc_tile: a 1000000x1000000xf32 tile needs at least 4000000000000 bytes but UB (vec) holds 196608"),
    ("r12_bad03_loop_of_2_pow_62.pto", 1, "13:5",
     "the kernel ran more than 1000 loop iterations; stopped (an endless loop? raise the limit with --max-steps)"),
    ("r12_bad04_sync_wait_id_never_set.pto", 1, "17:5",
     "sync.wait for cross-core signal id 2 from AIC0, which never sets it"),
    ("r12_bad05_pop_on_undeclared_direction.pto", 2, "17:5",  # round 13: refused before running (was exit 1)
     ("pto.tpop_from_aic uses the C2V FIFO, but no aic_initialize_pipe / aiv_initialize_pipe of the module "
      "declares that direction (dir_mask 1 or 3; 1 = C2V, 2 = V2C)")),
    ("r12_bad07_tpartadd_neither_source_full.pto", 2, "15:5",
     ("pto.tpartadd on a2a3: one source's valid region must equal the destination's 8x32; the sources' are "
      "5x20 and 8x16")),
])
def test_a_wrong_kernel_stops_at_its_line_with_the_exit_code_of_its_kind(tmp_path, name, code, where, message,
                                                                          timing):
    extra = ["--max-steps", "1000", *(["--no-data"] if timing else [])]
    args = {"r12_bad01_while_never_false.pto": {"arg1": 4, "arg2": 0},  # the host passes step 0
            "r12_bad03_loop_of_2_pow_62.pto": {"arg1": 1 << 62}}.get(name, {})
    got, out = cli_json(name, args, tmp_path, *extra)
    assert got == code, out
    assert "Traceback" not in out, out
    assert any(line.endswith(f"{where}: {message}") or f"{where}: {message}" in line
               for line in message_lines(out, name)), out


def test_trecip_in_place_on_a3_is_refused_before_running(tmp_path):
    name = "r12_bad06_trecip_in_place_on_a3.pto"
    code, out = cli_json(name, {}, tmp_path)
    assert code == 2, out
    assert any(line.startswith("13:5: pto.trecip") for line in message_lines(out, name)), out


def test_trecip_into_a_tile_at_the_same_address_faults_at_issue_on_a3():
    """The same rule when the storage is shared by two allocations at one address (only the run knows
    the addresses): refused at the op when it is issued, with data and timing-only alike."""
    import pyptoemu
    from pyptoemu.errors import PtoError

    text = """module attributes {pto.target_arch = "a3"} {
  func.func @recip(%x: !pto.ptr<f32>) attributes {pto.kernel_kind = #pto.kernel_kind<vector>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %a0 = arith.constant 0 : i64
    %vx = pto.make_tensor_view %x, shape = [%c8, %c8], strides = [%c8, %c1] : !pto.tensor_view<?x?xf32>
    %px = pto.partition_view %vx, offsets = [%c0, %c0], sizes = [%c8, %c8] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<8x8xf32>
    %s = pto.alloc_tile addr = %a0 : !pto.tile_buf<vec, 8x8xf32>
    %d = pto.alloc_tile addr = %a0 : !pto.tile_buf<vec, 8x8xf32>
    pto.tload ins(%px : !pto.partition_tensor_view<8x8xf32>) outs(%s : !pto.tile_buf<vec, 8x8xf32>)
    pto.trecip ins(%s : !pto.tile_buf<vec, 8x8xf32>) outs(%d : !pto.tile_buf<vec, 8x8xf32>)
    pto.tstore ins(%d : !pto.tile_buf<vec, 8x8xf32>) outs(%px : !pto.partition_tensor_view<8x8xf32>)
    return
  }
}
"""
    for data in (True, False):
        with pytest.raises(PtoError) as err:
            pyptoemu.run(text, data=data)
        assert "pto.trecip on a2a3: the source and the destination share storage" in str(err.value)
        assert err.value.loc is not None and err.value.loc.line == 12


def test_trecip_into_another_tile_runs_on_a3():
    """The rule refuses shared storage only: 1/x into a tile of its own gives NumPy's numbers."""
    import numpy as np

    import pyptoemu

    text = """module attributes {pto.target_arch = "a3"} {
  func.func @recip(%x: !pto.ptr<f32>) attributes {pto.kernel_kind = #pto.kernel_kind<vector>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %vx = pto.make_tensor_view %x, shape = [%c8, %c8], strides = [%c8, %c1] : !pto.tensor_view<?x?xf32>
    %px = pto.partition_view %vx, offsets = [%c0, %c0], sizes = [%c8, %c8] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<8x8xf32>
    %s = pto.alloc_tile : !pto.tile_buf<vec, 8x8xf32>
    %d = pto.alloc_tile : !pto.tile_buf<vec, 8x8xf32>
    pto.tload ins(%px : !pto.partition_tensor_view<8x8xf32>) outs(%s : !pto.tile_buf<vec, 8x8xf32>)
    pto.trecip ins(%s : !pto.tile_buf<vec, 8x8xf32>) outs(%d : !pto.tile_buf<vec, 8x8xf32>)
    pto.tstore ins(%d : !pto.tile_buf<vec, 8x8xf32>) outs(%px : !pto.partition_tensor_view<8x8xf32>)
    return
  }
}
"""
    x = np.random.default_rng(3).uniform(0.5, 4.0, (8, 8)).astype(np.float32)
    res = pyptoemu.run(text, inputs={"arg0": x})
    np.testing.assert_allclose(res.outputs["arg0"], 1.0 / x, rtol=1e-5)
