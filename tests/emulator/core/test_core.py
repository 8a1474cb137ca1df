"""The SimPy core: timing against the machine file, pipes, flags, deadlock, memory checks."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import pyptoemu
from ptoisa.machine import load_machine
from pyptoemu.errors import (
    BoundsError,
    CapacityError,
    DeadlockError,
    FindingsError,
    InputError,
    UnsupportedOpError,
    VerifyError,
)
from tests.emulator.core.kernels import binary_kernel, pview, vec

T = vec(16, 64)
P = pview(16, 64)


def _mte2_stream(n: int, rows: int = 64, cols: int = 64) -> str:
    tile = vec(rows, cols)
    loads = "\n".join(
        f"    pto.tload ins(%p0 : {pview(rows, cols)}) outs(%t : {tile})" for _ in range(n))
    return binary_kernel(f"    %t = pto.alloc_tile : {tile}\n{loads}", rows=rows, cols=cols, nargs=1)


@pytest.mark.parametrize("n", [1, 4, 9])
def test_mte2_stream_time_is_fixed_part_plus_bytes_over_bandwidth(n):
    """Each DMA holds MTE2 for its fixed part plus its bytes at the path bandwidth (st tload:
    265 + bytes / 128), so back-to-back loads follow each other by exactly that much."""
    m = load_machine("a2a3")
    res = pyptoemu.run(_mte2_stream(n), keep_log=True)
    loads = [i for i in res.core.trace_log if i.name == "tload"]
    assert len(loads) == n
    nbytes = 64 * 64 * 4
    occ = m.params["lat_gm_to_ub"] + math.ceil(nbytes / m.params["bw_gm_to_ub"])
    assert occ == 265 + 128
    first = loads[0].start
    assert [i.start for i in loads] == [first + k * occ for k in range(n)]
    assert res.cycles == first + n * occ
    assert res.pipes["MTE2"].busy_cycles == n * occ
    assert res.bound_pipe == "MTE2"


def test_mte2_stream_under_the_cost_model_variant_overlaps_the_fixed_part():
    """The uncalibrated PTO-ISA cost model stays reachable: there the fixed part only delays
    completion and the pipe is held for bytes / 58 B/cycle."""
    m = load_machine("a2a3:ptoisa_cost_model")
    res = pyptoemu.run(_mte2_stream(4), machine="a2a3:ptoisa_cost_model", keep_log=True)
    loads = [i for i in res.core.trace_log if i.name == "tload"]
    occ = math.ceil(64 * 64 * 4 / 58)
    assert [i.end - i.start for i in loads] == [occ] * 4
    assert res.cycles == loads[0].start + 4 * occ + m.params["lat_gm_to_ub"]


def test_time_us_uses_the_machine_clock():
    res = pyptoemu.run(_mte2_stream(2))
    assert res.time_us == pytest.approx(res.cycles / (load_machine("a2a3").clock_ghz * 1e3))


SYNCED_ADD = f"""
    %x = pto.alloc_tile : {T}
    %y = pto.alloc_tile : {T}
    %z = pto.alloc_tile : {T}
    pto.tload ins(%p0 : {P}) outs(%x : {T})
    pto.tload ins(%p1 : {P}) outs(%y : {T})
    pto.set_flag[<PIPE_MTE2>, <PIPE_V>, <EVENT_ID0>]
    pto.wait_flag[<PIPE_MTE2>, <PIPE_V>, <EVENT_ID0>]
    pto.tadd ins(%x, %y : {T}, {T}) outs(%z : {T})
    BARRIER
    pto.tmul ins(%z, %x : {T}, {T}) outs(%z : {T})
    pto.set_flag[<PIPE_V>, <PIPE_MTE3>, <EVENT_ID0>]
    pto.wait_flag[<PIPE_V>, <PIPE_MTE3>, <EVENT_ID0>]
    pto.tstore ins(%z : {T}) outs(%p2 : {P})
"""


def _inputs():
    rng = np.random.default_rng(0)
    return {"arg0": rng.standard_normal((16, 64)).astype(np.float32),
            "arg1": rng.standard_normal((16, 64)).astype(np.float32)}


def test_vector_chain_with_barrier_is_exact_and_race_free():
    ins = _inputs()
    res = pyptoemu.run(binary_kernel(SYNCED_ADD.replace("BARRIER", "pto.barrier <PIPE_V>")), inputs=ins)
    np.testing.assert_allclose(res.outputs["arg2"], (ins["arg0"] + ins["arg1"]) * ins["arg0"], rtol=1e-6)
    assert res.findings == []


def test_dependent_vector_ops_without_barrier_read_stale_data_and_are_reported():
    """The V pipe is not in order: the tmul starts before the tadd's result lands."""
    ins = _inputs()
    res = pyptoemu.run(binary_kernel(SYNCED_ADD.replace("BARRIER", "")), inputs=ins, races="warn")
    assert not np.allclose(res.outputs["arg2"], (ins["arg0"] + ins["arg1"]) * ins["arg0"])
    races = [f for f in res.findings if f.kind == "race"]
    assert len(races) >= 1
    assert races[0].detail["kind"] == "RAW" and races[0].pipes == ["V", "V"]
    assert "pto.barrier <PIPE_V>" in races[0].message


def test_missing_cross_pipe_flag_is_a_race_with_the_fix():
    ins = _inputs()
    body = SYNCED_ADD.replace("BARRIER", "pto.barrier <PIPE_V>").replace(
        "    pto.set_flag[<PIPE_MTE2>, <PIPE_V>, <EVENT_ID0>]\n    pto.wait_flag[<PIPE_MTE2>, <PIPE_V>, <EVENT_ID0>]\n",
        "")
    res = pyptoemu.run(binary_kernel(body), inputs=ins, races="warn")
    raw = [f for f in res.findings if f.kind == "race" and f.detail["kind"] == "RAW"]
    assert raw and raw[0].pipes == ["MTE2", "V"]
    assert "set_flag[<PIPE_MTE2>, <PIPE_V>" in raw[0].message
    with pytest.raises(FindingsError) as strict:  # default races=error: the run raises, with its result
        pyptoemu.run(binary_kernel(body), inputs=ins)
    assert strict.value.result.errors() and strict.value.kind == "findings"


def test_wait_without_set_is_a_deadlock_naming_pipe_and_line():
    body = f"""
    %x = pto.alloc_tile : {T}
    pto.wait_flag[<PIPE_MTE2>, <PIPE_V>, <EVENT_ID3>]
    pto.tadds ins(%x, %c1f : {T}, f32) outs(%x : {T})
"""
    text = binary_kernel(body, nargs=1, extra_consts="    %c1f = arith.constant 1.0 : f32")
    with pytest.raises(DeadlockError) as e:
        pyptoemu.run(text)
    msg = str(e.value)
    assert "pipe V blocked" in msg and "EVENT_ID3" in msg
    line = text.splitlines().index(next(ln for ln in text.splitlines() if "wait_flag" in ln)) + 1
    assert f"<string>:{line}:" in msg


def test_double_set_and_leftover_flag_are_findings():
    body = """
    pto.set_flag[<PIPE_MTE2>, <PIPE_V>, <EVENT_ID1>]
    pto.set_flag[<PIPE_MTE2>, <PIPE_V>, <EVENT_ID1>]
"""
    with pytest.raises(FindingsError) as info:  # a double set is an error finding: the run raises
        pyptoemu.run(binary_kernel(body, nargs=1))
    kinds = {f.kind for f in info.value.findings}
    assert {"double-set", "flag-left-set"} <= kinds


def test_event_id_out_of_range_is_reported():
    body = """
    pto.set_flag[<PIPE_MTE2>, <PIPE_V>, <EVENT_ID7>]
    pto.wait_flag[<PIPE_MTE2>, <PIPE_V>, <EVENT_ID7>]
"""
    res = pyptoemu.run(binary_kernel(body, nargs=1), machine=load_machine("a2a3"))
    assert not [f for f in res.findings if f.kind == "event-id-range"]  # 7 is legal (8 ids)


def test_capacity_overflow_names_tiles_and_sizes():
    big = vec(256, 128)  # 128 KiB each; UB is 192 KiB
    body = f"    %a = pto.alloc_tile : {big}\n    %b = pto.alloc_tile : {big}\n"
    with pytest.raises(CapacityError) as e:
        pyptoemu.run(binary_kernel(body, nargs=1))
    msg = str(e.value)
    assert "%b needs 131072 bytes" in msg and "196608" in msg and "%a" in msg


def test_misaligned_address_is_an_error():
    # the address is known only when it runs, block 0's index + 16 (a constant one, or one computed
    # from constants, is rejected before running: test_verify_red_team, test_verify_folding)
    body = f"    %a = pto.alloc_tile addr = %c16_i64 : {T}\n"
    with pytest.raises(CapacityError, match="not a multiple of its 32-byte alignment"):
        pyptoemu.run(binary_kernel(body, nargs=1, extra_consts="    %c16x = arith.constant 16 : i64\n"
                                                              "    %blk = pto.get_block_idx\n"
                                                              "    %c16_i64 = arith.addi %blk, %c16x : i64"))


def test_partition_out_of_bounds_is_an_error_with_location():
    # the offset is known only when it runs, block 0's index + 1 (a constant one, or one computed from
    # constants, is rejected before running: test_verify_red_team, test_verify_folding)
    text = binary_kernel("    %blk = pto.get_block_idx\n    %b0 = arith.index_cast %blk : i64 to index\n"
                         f"    %o1 = arith.addi %b0, %c1 : index\n"
                         f"    %bad = pto.partition_view %v0, offsets = [%o1, %c0], sizes = [%cr, %cc] "
                         f": !pto.tensor_view<?x?xf32> -> {P}\n", nargs=1)
    with pytest.raises(BoundsError, match=r"<string>:\d+:\d+: partition_view: dim 0 window \[1, 17\)"):
        pyptoemu.run(text)


def test_unknown_op_fails_at_run_time_with_location():
    text = binary_kernel(f"    %x = pto.alloc_tile : {T}\n    pto.tfrobnicate ins(%x : {T}) outs(%x : {T})\n",
                         nargs=1)
    with pytest.raises(InputError, match=r"<string>:\d+:5: pto.tfrobnicate is not an op of the PTO dialect"):
        pyptoemu.run(text)


def test_op_not_executable_yet_fails_at_run_time_with_location():
    text = binary_kernel(f"    %x = pto.alloc_tile : {T}\n    pto.tget_scale_addr ins(%x : {T}) outs(%x : {T})\n",
                         nargs=1)
    with pytest.raises(UnsupportedOpError, match=r"<string>:\d+:5: pto.tget_scale_addr is not supported by "
                                                 r"the emulator yet"):
        pyptoemu.run(text, machine="a5")


def test_an_a5_only_op_on_a2a3_is_a_located_error_before_running():
    text = binary_kernel(f"    %x = pto.alloc_tile : {T}\n    pto.tget_scale_addr ins(%x : {T}) outs(%x : {T})\n",
                         nargs=1)
    with pytest.raises(VerifyError, match=r"<string>:\d+:5: pto.tget_scale_addr exists only on a5; this kernel "
                                          r"runs on a2a3"):
        pyptoemu.run(text)


def test_input_dtype_mismatch_names_both_dtypes():
    with pytest.raises(InputError, match=r"float64.*f32|f32.*float64"):
        pyptoemu.run(_mte2_stream(1), inputs={"arg0": np.zeros((64, 64))})


def test_input_too_small_is_an_error():
    with pytest.raises(InputError, match="holds 10 elements"):
        pyptoemu.run(_mte2_stream(1), inputs={"arg0": np.zeros(10, np.float32)})


def test_bf16_void_npy_is_read_as_raw_bits(tmp_path):
    import ml_dtypes

    x = np.arange(16 * 64, dtype=np.float32).reshape(16, 64).astype(ml_dtypes.bfloat16)
    path = tmp_path / "x.npy"
    np.save(path, x)
    assert np.load(path).dtype.kind == "V"
    t = vec(16, 64, "bf16")
    p = pview(16, 64, "bf16")
    body = f"""
    %x = pto.alloc_tile : {t}
    pto.tload ins(%p0 : {p}) outs(%x : {t})
    pto.set_flag[<PIPE_MTE2>, <PIPE_MTE3>, <EVENT_ID0>]
    pto.wait_flag[<PIPE_MTE2>, <PIPE_MTE3>, <EVENT_ID0>]
    pto.tstore ins(%x : {t}) outs(%p1 : {p})
"""
    res = pyptoemu.run(binary_kernel(body, dtype="bf16", nargs=2), inputs={"arg0": str(path)})
    np.testing.assert_array_equal(res.outputs["arg1"].astype(np.float32), x.astype(np.float32))


def test_entry_selection():
    two = """
func.func @a(%arg0: !pto.ptr<f32>) { return }
func.func @b(%arg0: !pto.ptr<f32>) { return }
"""
    with pytest.raises(InputError, match="a, b"):
        pyptoemu.run(two)
    assert pyptoemu.run(two, entry="b").entry == "b"
    marked = two.replace("func.func @b(%arg0: !pto.ptr<f32>)", "func.func @b(%arg0: !pto.ptr<f32>) "
                         "attributes {pto.entry}")
    assert pyptoemu.run(marked).entry == "b"


def test_scalar_control_flow_and_calls():
    """scf.for with iter_args, scf.if with results, scf.while and func.call on scalars."""
    text = """
module {
  func.func private @twice(%v: index) -> index {
    %r = arith.addi %v, %v : index
    return %r : index
  }
  func.func @k(%arg0: !pto.ptr<i32>, %n: index) attributes {pto.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %c0) -> (index) {
      %t = func.call @twice(%i) : (index) -> index
      %a = arith.addi %acc, %t : index
      scf.yield %a : index
    }
    %c3 = arith.constant 3 : index
    %w:2 = scf.while (%j = %c0, %k = %c1) : (index, index) -> (index, index) {
      %lt = arith.cmpi slt, %j, %c3 : index
      scf.condition(%lt) %j, %k : index, index
    } do {
    ^bb0(%j2: index, %k2: index):
      %jn = arith.addi %j2, %c1 : index
      %kn = arith.muli %k2, %c3 : index
      scf.yield %jn, %kn : index, index
    }
    %big = arith.cmpi sgt, %s, %c3 : index
    %pick = scf.if %big -> (index) {
      scf.yield %s : index
    } else {
      scf.yield %c0 : index
    }
    %sum = arith.addi %pick, %w#1 : index
    %v = arith.index_cast %sum : index to i32
    pto.store_scalar %v, %arg0[%c0] : !pto.ptr<i32>, i32
    return
  }
}
"""
    res = pyptoemu.run(text, inputs={"arg0": np.zeros(4, np.int32)}, args={"arg1": 5})
    # sum 2*i for i<5 = 20; while: k = 3**3 = 27
    assert int(res.outputs["arg0"][0]) == 47


def test_deadlock_reports_the_cycle_of_waits_and_waits_nobody_sets():
    text = """func.func @k(%arg0: !pto.ptr<f32>) {
  pto.wait_flag[<PIPE_V>, <PIPE_MTE2>, <EVENT_ID0>]
  pto.set_flag[<PIPE_MTE2>, <PIPE_V>, <EVENT_ID0>]
  pto.wait_flag[<PIPE_MTE2>, <PIPE_V>, <EVENT_ID0>]
  pto.set_flag[<PIPE_V>, <PIPE_MTE2>, <EVENT_ID0>]
  pto.wait_flag[<PIPE_FIX>, <PIPE_M>, <EVENT_ID2>]
  return
}
"""
    with pytest.raises(DeadlockError) as e:
        pyptoemu.run(text)
    msg = str(e.value)
    assert "cycle of waits: MTE2 -> V -> MTE2" in msg
    assert "<string>:6:3: wait_flag FIX->M EVENT_ID2 - no set_flag of this flag exists" in msg
    assert {f.kind for f in e.value.findings} >= {"deadlock", "wait-never-set"}


def test_ragged_tail_idiom_with_dynamic_valid_region():
    """tload into a `v_row=?, v_col=?` tile, set_validshape, tfillpad with pad=3 (-inf), then a
    row max over the whole tile sees -inf in the tail (pto-text-format §5.4)."""
    dyn = vec(16, 64, vr="?", vc="?")
    full = vec(16, 64, pad=3)
    col = ("!pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=1, v_row=16, v_col=1, blayout=col_major, "
           "slayout=none_box, fractal=512, pad=0>")
    pin = pview(5, 40)
    pout = "!pto.partition_tensor_view<16x1xf32>"
    text = f"""func.func @k(%arg0: !pto.ptr<f32>, %arg1: !pto.ptr<f32>, %n: index) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %c16 = arith.constant 16 : index
  %c40 = arith.constant 40 : index
  %c64 = arith.constant 64 : index
  %v0 = pto.make_tensor_view %arg0, shape = [%c16, %c64], strides = [%c64, %c1] : !pto.tensor_view<?x?xf32>
  %v1 = pto.make_tensor_view %arg1, shape = [%c16, %c1], strides = [%c1, %c1] : !pto.tensor_view<?x?xf32>
  %p0 = pto.partition_view %v0, offsets = [%c0, %c0], sizes = [%c5, %c40] : !pto.tensor_view<?x?xf32> -> {pin}
  %p1 = pto.partition_view %v1, offsets = [%c0, %c0], sizes = [%c16, %c1] : !pto.tensor_view<?x?xf32> -> {pout}
  %t = pto.alloc_tile valid_row = %c16 valid_col = %c64 : {dyn}
  %f = pto.alloc_tile : {full}
  %tmp = pto.alloc_tile : {full}
  %m = pto.alloc_tile : {col}
  pto.set_validshape %t, %c5, %c40 : {dyn}
  pto.tload ins(%p0 : {pin}) outs(%t : {dyn})
  pto.barrier <PIPE_ALL>
  pto.tfillpad ins(%t : {dyn}) outs(%f : {full})
  pto.barrier <PIPE_V>
  pto.trowmax ins(%f, %tmp : {full}, {full}) outs(%m : {col})
  pto.barrier <PIPE_ALL>
  pto.tstore ins(%m : {col}) outs(%p1 : {pout})
  return
}}
"""
    x = np.random.default_rng(5).standard_normal((16, 64)).astype(np.float32)
    res = pyptoemu.run(text, inputs={"arg0": x}, args={"arg2": 0})
    got = res.outputs["arg1"].reshape(16)
    np.testing.assert_array_equal(got[:5], x[:5, :40].max(axis=1))
    assert np.all(np.isneginf(got[5:]))


def test_illegal_element_type_is_a_precise_input_error():
    text = """func.func @k(%arg0: !pto.ptr<i32>) {
  %t = pto.alloc_tile : !pto.tile_buf<vec, 8x8xi32>
  pto.texp ins(%t : !pto.tile_buf<vec, 8x8xi32>) outs(%t : !pto.tile_buf<vec, 8x8xi32>)
  return
}
"""
    with pytest.raises(InputError, match=r"<string>:3:3: pto.texp: destination element type i32 is not "
                                         r"supported \(legal: f16, f32\)"):
        pyptoemu.run(text)


def test_callers_arrays_are_never_modified():
    x = np.ones((32, 32), np.float32)
    z = np.zeros((32, 32), np.float32)
    r = pyptoemu.run(Path(__file__).resolve().parents[3] / "examples" / "vadd_32x32.pto",
                     inputs={"arg0": x, "arg1": x, "arg2": z})
    assert float(r.outputs["arg2"][0, 0]) == 2.0
    assert not z.any() and x.flags.writeable and np.all(x == 1)
