"""Second red-team round: kernels written the way other PTO tools write them, on the parts of the
format the first round did not reach (SPMD tails, cube<->vector FIFOs in every split and direction
without sync in the text, runtime valid dims on a pop, scf.while with iter_args and a data-dependent
exit, tsort32 + tmrgsort, A5 targets, the tile-level form with a ragged loop). Each runs through
``pyptoemu.run`` and is compared with NumPy; one also runs through the command line, and the
timing-only run (``data=False``) must give the same cycles as the run with data.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import pyptoemu
from pyptoemu.cli import main

KERNELS = Path(__file__).resolve().parent / "kernels"
BF16 = ml_dtypes.bfloat16


def _run(name: str, **kw):
    r = pyptoemu.run(KERNELS / name, **kw)
    assert [str(f) for f in r.findings if f.severity == "error"] == []
    return r


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


@pytest.mark.parametrize(("n", "blocks"), [(40, 3), (40, 4), (1, 1), (33, 3)])
def test_spmd_blocks_with_a_ragged_last_block(n, blocks):
    rng = _rng(16)
    x, y = rng.standard_normal((2, n, 64)).astype(np.float32)
    r = _run("k16_spmd_tail_blocks.pto", inputs={"arg0": x, "arg1": y, "arg2": np.full((n, 64), 7, np.float32)},
             args={"arg3": n}, blocks=blocks)
    np.testing.assert_array_equal(r.outputs["arg2"].reshape(n, 64), x + y)


def test_c2v_split_by_columns_with_no_sync_in_the_text():
    rng = _rng(17)
    a = rng.standard_normal((32, 32)).astype(np.float16)
    b = rng.standard_normal((32, 64)).astype(np.float16)
    r = _run("k17_c2v_split_cols_nosync.pto", inputs={"arg0": a, "arg1": b})
    assert r.sync_mode == "auto"
    ref = a.astype(np.float32) @ b.astype(np.float32) + 1
    np.testing.assert_allclose(r.outputs["arg2"].reshape(32, 64), ref, rtol=1e-5, atol=1e-5 * 32)


@pytest.mark.parametrize("n", [1, 6])
def test_two_way_fifo_more_tiles_than_slots(n):
    rng = _rng(18)
    a = rng.standard_normal((32 * n, 32)).astype(np.float16)
    b = rng.standard_normal((32, 32)).astype(np.float16)
    r = _run("k18_two_way_fifo.pto", inputs={"arg0": a, "arg1": b}, args={"arg3": n, "arg4": 0.5})
    ref = (a * np.float16(0.5)).astype(np.float32) @ b.astype(np.float32) + 1
    np.testing.assert_allclose(r.outputs["arg2"].reshape(32 * n, 32), ref, rtol=1e-5, atol=1e-5 * 32)


@pytest.mark.parametrize("m", [1, 16, 20, 32])
def test_c2v_pop_with_runtime_valid_rows_stores_only_those(m):
    rng = _rng(19)
    a = rng.standard_normal((32, 32)).astype(np.float16)
    b = rng.standard_normal((32, 32)).astype(np.float16)
    r = _run("k19_c2v_pop_runtime_valid.pto", inputs={"arg0": a, "arg1": b, "arg2": np.zeros((m, 32), np.float32)},
             args={"arg3": m})
    ref = (a.astype(np.float32) @ b.astype(np.float32))[:m]
    np.testing.assert_allclose(r.outputs["arg2"].reshape(m, 32), ref, rtol=1e-5, atol=1e-5 * 32)


def _scan_reference(x: np.ndarray, limit: float):
    sums = np.full(x.shape[0], -7, np.float32)
    rs = x.sum(1, dtype=np.float32)
    i, acc = 0, np.float32(0)
    while i < x.shape[0] and acc < limit:
        sums[i:i + 8] = rs[i:i + 8]
        acc = np.float32(acc + rs[i])
        i += 8
    return sums, i, acc


@pytest.mark.parametrize("limit", [-1.0, 5.0, 1e9])
def test_while_with_iter_args_exits_on_data(limit):
    x = (_rng(20).standard_normal((64, 64)) + 0.3).astype(np.float32)
    r = _run("k20_while_iter_args_tgetval.pto",
             inputs={"arg0": x, "arg1": np.full((64, 1), -7, np.float32), "arg2": np.zeros(2, np.float32)},
             args={"arg3": 64, "arg4": limit})
    sums, i, acc = _scan_reference(x, limit)
    if i == 0:
        assert "arg1" not in r.outputs  # the body never ran: outputs hold what the kernel wrote
    else:
        np.testing.assert_allclose(r.outputs["arg1"].ravel(), sums, rtol=1e-5, atol=1e-5)
    assert r.outputs["arg2"][0] == i
    np.testing.assert_allclose(r.outputs["arg2"][1], acc, rtol=1e-5)


def test_scalar_store_to_an_argument_given_no_data_gets_stand_in_data(tmp_path):
    """Found by the red team: a pointer only written by store_scalar had no stand-in data, so the
    command line stopped with 'element 0 outside arg2'."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["run", "--json", "-q", str(KERNELS / "k20_while_iter_args_tgetval.pto"), "--arg", "arg3=40",
                     "--arg", "arg4=1e9", "--output-dir", str(tmp_path)])
    assert code == 0, err.getvalue()
    assert json.loads(out.getvalue())["status"] == "ok"
    assert np.load(tmp_path / "arg2.npy")[0] == 40  # every row block walked


def test_tsort32_then_tmrgsort_sorts_values_with_their_indices():
    x = _rng(21).standard_normal(128).astype(np.float32)
    x[5] = x[77]  # a tie across two runs: the lower run's record first
    ids = np.arange(1000, 1128, dtype=np.uint32)
    r = _run("k21_sort32_merge.pto", inputs={"arg0": x, "arg1": ids})
    rec = r.outputs["arg2"].view(np.uint32).reshape(128, 2)
    order = np.argsort(-x, kind="stable")
    np.testing.assert_array_equal(rec[:, 0].view(np.float32), x[order])
    np.testing.assert_array_equal(rec[:, 1], ids[order])


def test_a5_target_runs_bf16_add_and_i8_max_on_the_a5_model():
    rng = _rng(22)
    x, y = rng.standard_normal((2, 16, 64)).astype(BF16)
    p, q = rng.integers(-128, 128, (2, 16, 64)).astype(np.int8)
    r = _run("k22_a5_bf16_i8.pto", inputs={"arg0": x, "arg1": y, "arg3": p, "arg4": q})
    assert r.machine == "a5"
    np.testing.assert_array_equal(r.outputs["arg2"].reshape(16, 64), (x.astype(np.float32) + y.astype(np.float32)).astype(BF16))
    np.testing.assert_array_equal(r.outputs["arg5"].reshape(16, 64), np.maximum(p, q))


@pytest.mark.parametrize("n", [40, 1, 64])
def test_tile_form_loop_keeps_the_tail_valid_region_through_its_ops(n):
    """Found by the red team: the tile-level lowering gave exp/mul results the full valid region
    although their operands were a loaded tail, so the store wrote 16 rows past the tail."""
    rng = _rng(23)
    x, y = rng.standard_normal((2, 64, 32)).astype(np.float32)
    z = np.full((64, 32), 9, np.float32)
    r = _run("k23_tile_form_ragged_loop.pto", inputs={"arg0": x, "arg1": y, "arg2": z}, args={"arg3": n})
    ref = z.copy()
    ref[:n] = np.exp(x[:n]) * y[:n]
    np.testing.assert_allclose(r.outputs["arg2"].reshape(64, 32), ref, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(("name", "args", "blocks"), [
    ("k16_spmd_tail_blocks.pto", {"arg3": 40}, 3),
    ("k17_c2v_split_cols_nosync.pto", {}, 1),
    ("k18_two_way_fifo.pto", {"arg3": 6, "arg4": 0.5}, 1),
    ("k19_c2v_pop_runtime_valid.pto", {"arg3": 20}, 1),
    ("k21_sort32_merge.pto", {}, 1),
])
def test_timing_only_run_gives_the_cycles_of_the_run_with_data(name, args, blocks):
    with_data = _run(name, args=args, blocks=blocks)
    timing = _run(name, args=args, blocks=blocks, data=False)
    assert timing.cycles == with_data.cycles
    assert [c.cycles for c in timing.cores] == [c.cycles for c in with_data.cores]


@pytest.mark.parametrize("nb", [1, 3])
def test_cube_to_vector_through_gm_with_sync_set_and_wait(nb):
    rng = _rng(24)
    a = rng.standard_normal((32 * nb, 32)).astype(np.float16)
    b = rng.standard_normal((32, 32)).astype(np.float16)
    r = _run("k24_sync_set_wait_gm.pto", inputs={"arg0": a, "arg1": b}, args={"arg4": nb}, blocks=nb)
    assert r.sync_mode == "asis" and r.findings == []
    prod = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(r.outputs["arg2"].reshape(-1, 32), prod, rtol=1e-5, atol=1e-5 * 32)
    np.testing.assert_allclose(r.outputs["arg3"].reshape(-1, 32), 2 * prod - 1, rtol=1e-5, atol=1e-4)


def test_blocks_accumulate_bf16_with_atomic_adds():
    nb = 5
    x = _rng(25).standard_normal((16 * nb, 64)).astype(BF16)
    r = _run("k25_spmd_atomic_bf16.pto", inputs={"arg0": x, "arg1": np.zeros((16, 64), BF16)}, blocks=nb)
    ref = sum(((b + 1) * x[16 * b:16 * b + 16].astype(np.float32)).astype(BF16).astype(np.float32) for b in range(nb))
    out = r.outputs["arg1"].reshape(16, 64).astype(np.float32)
    # each add rounds to bf16 in completion order: a few bf16 ulps of the running sum
    np.testing.assert_allclose(out, ref, rtol=1.6e-2, atol=0.15)
    assert np.abs(out - ref).max() > 0  # bf16 accumulation, not an f32 sum converted once


@pytest.mark.parametrize("sync", ["auto", "serial"])
def test_async_get_polled_in_a_while_then_put_back(sync):
    """Found by the red team: with --sync serial the poll loop spun at one instant (test_async_event
    never let simulated time pass, so the copy never started) until the step limit; and a timing-only
    run of an async copy was an internal error (it wrote values that do not exist)."""
    x = _rng(27).standard_normal(256).astype(np.float32)
    z = np.zeros(256, np.float32)
    r = _run("k27_async_get_poll.pto", inputs={"arg0": x, "arg1": z, "arg2": z}, sync=sync)
    np.testing.assert_array_equal(r.outputs["arg1"].ravel(), x)  # the get
    np.testing.assert_array_equal(r.outputs["arg2"].ravel(), x)  # the put back
    np.testing.assert_array_equal(r.outputs["arg4"].ravel(), 2 * x)
    timing = _run("k27_async_get_poll.pto", sync=sync, data=False)
    assert timing.cycles == r.cycles and timing.outputs == {}


def test_memref_level_reinterpret_cast_and_bind_tile_per_block():
    """Found by the red team: memref.reinterpret_cast and pto.bind_tile (spec §2.8, §3.3) stopped
    with 'not supported by the emulator yet'."""
    x = _rng(28).standard_normal(1024).astype(np.float32)
    r = _run("k28_memref_reinterpret_bind_tile.pto", inputs={"arg0": x, "arg1": np.zeros(64, np.float32)}, blocks=8)
    np.testing.assert_array_equal(r.outputs["arg1"].ravel(), x.reshape(64, 16).max(1))
    with pytest.raises(pyptoemu.InputError, match=r"k28_memref_reinterpret_bind_tile.pto:14:5: input arg0 holds 1024"):
        pyptoemu.run(KERNELS / "k28_memref_reinterpret_bind_tile.pto", inputs={"arg0": x}, blocks=9)


def test_bind_tile_with_an_unknown_config_value_is_located():
    text = (KERNELS / "k28_memref_reinterpret_bind_tile.pto").read_text().replace("#pto.blayout<col_major>", "7 : i32")
    with pytest.raises(pyptoemu.InputError, match=r":19:5: pto.bind_tile: blayout = 7 \(known: row_major, col_major\)"):
        pyptoemu.run(text, inputs={"arg0": np.zeros(1024, np.float32)})


@pytest.mark.parametrize("kb", [1, 3])
def test_a5_cube_k_loop_with_nz_left_tiles(kb):
    rng = _rng(29)
    a = rng.standard_normal((32, 32 * kb)).astype(BF16)
    b = rng.standard_normal((32 * kb, 32)).astype(BF16)
    r = _run("k29_a5_matmul_kloop_nosync.pto", inputs={"arg0": a, "arg1": b}, args={"arg3": kb})
    assert r.machine == "a5" and r.sync_mode == "auto"
    ref = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(r.outputs["arg2"].reshape(32, 32), ref, rtol=1e-5, atol=1e-5 * 32 * kb)


def test_tcvt_corner_cases_saturate_round_and_overflow_as_specified():
    x = np.array([np.nan, np.inf, -np.inf, 3e9, -3e9, 2.5, -2.5, 1e5, -1e5, 65504, 65520, 65519.9, 300.4, -7.6,
                  255.5, 256.4, 1 + 2**-8, 1 + 3 * 2**-8, -(1 + 2**-8), 1 + 2**-9, 0.0, -0.0, 1e-40, 6e-8, 3e-8,
                  65536, 70000, -70000, 100.5, 101.5, 0.5, 1.5], np.float32)
    xi = np.array([0, 1, -1, 2047, 2049, 4097, 65504, 65519, 65520, 100000, -100000, 2**31 - 1, -2**31, 3, 5, 7] * 2,
                  np.int32)
    o = {k: v.ravel() for k, v in _run("k30_tcvt_corners.pto", inputs={"arg0": x, "arg5": xi}).outputs.items()}
    x64 = x.astype(np.float64)
    with np.errstate(all="ignore"):
        trunc = np.where(np.isnan(x64), 0, np.trunc(x64))
        np.testing.assert_array_equal(o["arg1"], np.clip(trunc, -2**31, 2**31 - 1).astype(np.int64).astype(np.int32))
        np.testing.assert_array_equal(o["arg2"], x.astype(np.float16))  # sat OFF: overflow to inf
        sat = np.where(np.isfinite(x), np.clip(x, -65504, 65504), x).astype(np.float16)  # sat ON: finite -> max
        np.testing.assert_array_equal(o["arg3"], sat)
        u8 = np.clip(np.where(np.isnan(sat), 0, np.rint(sat.astype(np.float64))), 0, 255).astype(np.uint8)
        np.testing.assert_array_equal(o["arg4"], u8)
        np.testing.assert_array_equal(o["arg6"], xi.astype(np.float16))  # nearest-even, inf past 65519
    np.testing.assert_array_equal(o["arg7"].view(np.uint16), x.astype(BF16).view(np.uint16))  # ties to even
    bits = x.view(np.uint32).astype(np.uint64)
    away = ((bits >> 16) + ((bits & 0xFFFF) >= 0x8000)).astype(np.uint16)  # ROUND: ties away from zero
    finite = np.isfinite(x)
    np.testing.assert_array_equal(o["arg8"].view(np.uint16)[finite], away[finite])


@pytest.mark.parametrize("n", [1, 6])
def test_v2c_on_an_explicit_l2l_pipe_into_a_declare_tile(n):
    rng = _rng(31)
    x = rng.standard_normal((32 * n, 32)).astype(np.float32)
    w = rng.standard_normal((32, 32)).astype(np.float16)
    r = _run("k31_v2c_l2l_pipe.pto", inputs={"arg0": x, "arg1": w}, args={"arg3": n})
    ref = x.astype(np.float16).astype(np.float32) @ w.astype(np.float32)
    np.testing.assert_allclose(r.outputs["arg2"].reshape(-1, 32), ref, rtol=1e-5, atol=1e-5 * 32)


@pytest.mark.parametrize("swap_from", [0, 32, 64])
def test_if_yielding_tiles_into_a_call_that_writes_one(swap_from):
    rng = _rng(32)
    x, y = rng.standard_normal((2, 64, 64)).astype(np.float32)
    r = _run("k32_if_yields_tiles_call.pto", inputs={"arg0": x, "arg1": y}, args={"arg3": 64, "arg4": swap_from, "arg5": 0.5})
    ref = np.where(np.arange(64)[:, None] >= swap_from, y + 0.5 * x, x + 0.5 * y)
    np.testing.assert_allclose(r.outputs["arg2"].reshape(64, 64), ref, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("m", [20, 1, 32])
def test_tile_form_matmul_of_a_ragged_left_operand_stores_its_rows(m):
    rng = _rng(33)
    a = rng.standard_normal((32, 32)).astype(np.float16)
    b = rng.standard_normal((32, 32)).astype(np.float16)
    c = np.full((32, 32), 5, np.float32)
    r = _run("k33_tile_form_ragged_matmul.pto", inputs={"arg0": a, "arg1": b, "arg2": c}, args={"arg3": m})
    ref = c.copy()
    ref[:m] = (a.astype(np.float32) @ b.astype(np.float32))[:m]
    np.testing.assert_allclose(r.outputs["arg2"].reshape(32, 32), ref, rtol=1e-5, atol=1e-5 * 32)


@pytest.mark.parametrize("n", [16, 112])
def test_ping_pong_through_loop_carried_tiles_overlaps_and_matches(n):
    x = _rng(34).standard_normal((n, 64)).astype(np.float32)
    auto = _run("k34_pingpong_iter_args_tiles.pto", inputs={"arg0": x}, args={"arg2": n})
    serial = _run("k34_pingpong_iter_args_tiles.pto", inputs={"arg0": x}, args={"arg2": n}, sync="serial")
    np.testing.assert_array_equal(auto.outputs["arg1"].reshape(n, 64), x * x + 1)
    np.testing.assert_array_equal(auto.outputs["arg1"], serial.outputs["arg1"])
    if n > 16:
        assert auto.cycles < 0.8 * serial.cycles  # the next block's load overlaps this block's compute


def test_one_function_with_cube_and_vector_sections_and_a_fifo():
    rng = _rng(35)
    a = rng.standard_normal((32, 32)).astype(np.float16)
    b = rng.standard_normal((32, 32)).astype(np.float16)
    r = _run("k35_sections_one_function.pto", inputs={"arg0": a, "arg1": b})
    assert [c.kind for c in r.cores] == ["aic", "aiv", "aiv"]
    ref = np.maximum(a.astype(np.float32) @ b.astype(np.float32), 0)
    np.testing.assert_allclose(r.outputs["arg2"].reshape(32, 32), ref, rtol=1e-5, atol=1e-5 * 32)


def test_generic_form_binary_op_takes_src0_src1_dst():
    rng = _rng(36)
    a, b = rng.standard_normal((2, 16, 32)).astype(np.float32)
    r = _run("k36_generic_form_tadd.pto", inputs={"arg0": a, "arg1": b})
    np.testing.assert_array_equal(r.outputs["arg2"].reshape(16, 32), a + b)


def test_generic_form_fifo_ops_match_their_pretty_form():
    """Found by the red team: a generic-form aiv_initialize_pipe had its consumer buffers ignored (the
    pop then faulted: 'AIV1 initialised no C2V consumer buffer')."""
    rng = _rng(37)
    a = rng.standard_normal((32, 32)).astype(np.float16)
    b = rng.standard_normal((32, 64)).astype(np.float16)
    r = _run("k37_generic_form_fifo.pto", inputs={"arg0": a, "arg1": b})
    np.testing.assert_allclose(r.outputs["arg2"].reshape(32, 64), a.astype(np.float32) @ b.astype(np.float32) + 1,
                               rtol=1e-5, atol=1e-5 * 32)
    unsplit = (KERNELS / "k37_generic_form_fifo.pto").read_text().replace("array<i32: 0, 1, 1>", "array<i32: 1, 1, 1>")
    with pytest.raises(pyptoemu.InputError, match=r":39:5: pto.aiv_initialize_pipe: 2 operands do not split"):
        pyptoemu.run(unsplit, inputs={"arg0": a, "arg1": b})


def test_huge_views_run_timing_only_and_are_refused_with_data():
    """2^40 rows of f32 (256 TiB): the timing-only run needs no data and gives the cycles of the same
    blocks over a 2^20-row matrix (both too large for L2, so both read HBM); with data the stand-in
    generation limit is named at the view."""
    n = 2**40
    huge = _run("k16_spmd_tail_blocks.pto", args={"arg3": n}, blocks=4, data=False)
    large = _run("k16_spmd_tail_blocks.pto", args={"arg3": 2**20}, blocks=4, data=False)
    in_l2 = _run("k16_spmd_tail_blocks.pto", args={"arg3": 64}, blocks=4, data=False)
    assert huge.cycles == large.cycles > in_l2.cycles
    with pytest.raises(pyptoemu.InputError, match=r"k16_spmd_tail_blocks.pto:16:7: the view made here over arg0 reaches"):
        pyptoemu.run(KERNELS / "k16_spmd_tail_blocks.pto", args={"arg3": n}, blocks=4)


def test_fifo_staged_through_a_per_block_gm_workspace():
    """aic_/aiv_initialize_pipe with gm_slot_buffer (A2/A3 GM staging), one 8-slot region per block.
    Found by the red team: a workspace given no data had no stand-in data, so the first push stopped
    with 'the GM slot buffer over arg3 is too small for slot 0'."""
    rng = _rng(38)
    nb, n = 2, 5
    a = rng.standard_normal((32 * nb * n, 32)).astype(np.float16)
    b = rng.standard_normal((32, 32)).astype(np.float16)
    ref = 0.5 * (a.astype(np.float32) @ b.astype(np.float32))
    r = _run("k38_gm_staged_fifo_blocks.pto", inputs={"arg0": a, "arg1": b, "arg3": np.zeros(nb * 8192, np.float32)},
             args={"arg4": n}, blocks=nb)
    np.testing.assert_allclose(r.outputs["arg2"].reshape(-1, 32), ref, rtol=1e-5, atol=1e-5 * 32)
    ws = r.outputs["arg3"].reshape(nb, 8, 32, 32)
    np.testing.assert_allclose(0.5 * ws[1, n - 1], ref[-32:], rtol=1e-5, atol=1e-5 * 32)  # block 1's last slot
    assert not ws[:, n:].any()  # slots past the n pushes untouched
    standin = _run("k38_gm_staged_fifo_blocks.pto", inputs={"arg0": a, "arg1": b}, args={"arg4": n}, blocks=nb)
    np.testing.assert_array_equal(standin.outputs["arg2"], r.outputs["arg2"])
    with pytest.raises(pyptoemu.KernelFault, match="GM slot buffer over arg3 is too small for slot 0"):
        pyptoemu.run(KERNELS / "k38_gm_staged_fifo_blocks.pto", inputs={"arg0": a, "arg1": b,
                     "arg3": np.zeros(8192 + 100, np.float32)}, args={"arg4": n}, blocks=nb)


def test_a5_cube_to_vector_fifo_runs_concurrently():
    """Found by the red team while a5 was one combined core (the entry's cube and vector calls ran in
    sequence and the cube's import_reserved_buffer waited forever); runs since a5 has its chip layout."""
    rng = _rng(39)
    a = rng.standard_normal((32, 32)).astype(np.float16)
    b = rng.standard_normal((32, 32)).astype(np.float16)
    r = _run("k39_a5_c2v_fifo.pto", inputs={"arg0": a, "arg1": b, "arg2": np.zeros((20, 32), np.float32)},
             args={"arg3": 20})
    assert r.machine == "a5"
    np.testing.assert_allclose(r.outputs["arg2"].reshape(20, 32), (a.astype(np.float32) @ b.astype(np.float32))[:20],
                               rtol=1e-5, atol=1e-5 * 32)


@pytest.mark.parametrize("m", [20, 8, 32])
def test_c2v_push_of_a_ragged_tile_splits_at_half_the_static_rows(m):
    """Found by the red team: a split push cut the valid region in two (20 rows -> 10 + 10), so
    vector core 1 received rows 10..19 where the hardware gives it rows 16..19 (exit 0, rows 10..15
    missing and 16..19 wrong before the pop's shape check made it a fault)."""
    rng = _rng(40)
    a = rng.standard_normal((32, 32)).astype(np.float16)
    b = rng.standard_normal((32, 32)).astype(np.float16)
    r = _run("k40_c2v_ragged_push.pto", inputs={"arg0": a, "arg1": b, "arg2": np.zeros((m, 32), np.float32)},
             args={"arg3": m})
    ref = (a.astype(np.float32) @ b.astype(np.float32))[:m]
    np.testing.assert_allclose(r.outputs["arg2"].reshape(m, 32), ref, rtol=1e-5, atol=1e-5 * 32)


@pytest.mark.parametrize(("m", "blocks"), [(20, 1), (52, 2)])
def test_v2c_push_of_ragged_halves_joins_them_on_the_cube(m, blocks):
    rng = _rng(41)
    a = rng.standard_normal((m, 32)).astype(np.float16)
    b = rng.standard_normal((32, 32)).astype(np.float16)
    r = _run("k41_v2c_ragged_halves.pto", inputs={"arg0": a, "arg1": b, "arg2": np.zeros((m, 32), np.float32)},
             args={"arg3": m}, blocks=blocks)
    ref = (2 * a).astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(r.outputs["arg2"].reshape(m, 32), ref, rtol=1e-5, atol=1e-5 * 32)


@pytest.mark.parametrize("n", [40, 1])
def test_tile_form_row_reduction_of_a_tail_stores_only_its_rows(n):
    x = _rng(42).standard_normal((48, 64)).astype(np.float32)
    s = np.full((48, 1), 7, np.float32)
    r = _run("k42_tile_form_rowsum_tail.pto", inputs={"arg0": x, "arg1": s}, args={"arg2": n})
    ref = s.copy()
    ref[:n, 0] = x[:n].sum(1)
    np.testing.assert_allclose(r.outputs["arg1"].reshape(48, 1), ref, rtol=1e-5, atol=1e-5)
