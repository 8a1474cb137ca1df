"""Twelfth red-team round: valid kernels written from the spec alone (kernels/r12_k*), on ops and
combinations no earlier round used, chip kernels (FIFOs split by columns in waves of blocks, a V2C
stream longer than its FIFO, cross-core signals both ways over a two-slot GM workspace) and odd
dtypes. Each is compared with NumPy, and each run is repeated timing-only (``data=False``): the
cycles, the findings and the bound text must be the same to the bit (issue 8 item 6)."""

from __future__ import annotations

import numpy as np
import pytest
from ml_dtypes import bfloat16

import pyptoemu
from tests.e2e.user_kernels.running import KERNELS, cli_json, run_clean, run_clean_twice


def _f32(a: np.ndarray) -> np.ndarray:
    return a.astype(np.float32)


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def test_trecip_into_its_own_tile_taddc_and_tsubc():
    a, b, c = (_f32(_rng(1).random((3, 16, 32)) + 0.5))
    r = run_clean_twice("r12_k01_recip_addc_subc.pto", {"arg0": a, "arg1": b, "arg2": c})
    np.testing.assert_allclose(r.outputs["arg3"].reshape(16, 32), a / (a + b + c), rtol=1e-5)
    np.testing.assert_allclose(r.outputs["arg4"].reshape(16, 32), (a - b + c) * (1 / c), rtol=1e-5)


def test_i16_not_and_or_xor_and_shifts_by_scalars_and_per_element():
    a, b = _rng(2).integers(-32768, 32768, (2, 16, 48)).astype(np.int16)
    r = run_clean_twice("r12_k02_i16_bitwise.pto", {"arg0": a, "arg1": b})
    out = {k: r.outputs[k].reshape(16, 48) for k in ("arg2", "arg3", "arg4", "arg5")}
    np.testing.assert_array_equal(out["arg2"], ~a)
    np.testing.assert_array_equal(out["arg3"], a & b)
    np.testing.assert_array_equal(out["arg4"], (((a | b) ^ b) << 3).astype(np.int16) >> 1)
    np.testing.assert_array_equal(out["arg5"], a >> (b & 7))


@pytest.mark.parametrize(("br", "bc"), [(5, 20), (8, 32), (1, 1)])
def test_partial_add_max_min_where_one_source_covers_only_a_runtime_corner(br, bc):
    a, b = _f32(_rng(3).standard_normal((2, 8, 32)))
    r = run_clean_twice("r12_k03_part_ops_ragged.pto", {"arg0": a, "arg1": b}, {"arg5": br, "arg6": bc})
    both = np.zeros((8, 32), bool)
    both[:br, :bc] = True
    np.testing.assert_array_equal(r.outputs["arg2"].reshape(8, 32), np.where(both, a + b, a))
    np.testing.assert_array_equal(r.outputs["arg3"].reshape(8, 32), np.where(both, np.maximum(a, b), a))
    np.testing.assert_array_equal(r.outputs["arg4"].reshape(8, 32), np.where(both, np.minimum(a, b), a))


def test_f16_column_broadcasts_over_twelve_valid_rows():
    rng = _rng(4)
    a = rng.standard_normal((12, 64)).astype(np.float16)
    row = (rng.random((1, 64)) + 0.5).astype(np.float16)
    r = run_clean_twice("r12_k04_f16_colexpand_family.pto", {"arg0": a, "arg1": row})
    out = {k: _f32(r.outputs[k].reshape(12, 64)) for k in ("arg2", "arg3", "arg4", "arg5", "arg6")}
    np.testing.assert_array_equal(out["arg2"], _f32(np.broadcast_to(row, (12, 64))))
    np.testing.assert_allclose(out["arg3"], _f32(a / row), rtol=1e-3)
    np.testing.assert_array_equal(out["arg4"], _f32(np.maximum(a, row)))
    np.testing.assert_array_equal(out["arg5"], _f32(np.minimum(a, row)))
    np.testing.assert_allclose(out["arg6"], np.exp(_f32(a) - _f32(row)), rtol=2e-3)


def test_row_operands_of_eight_columns_repeat_and_prelu_takes_a_slope_tile():
    rng = _rng(5)
    a, r8 = _f32(rng.standard_normal((16, 32))), _f32(rng.standard_normal((16, 8)))
    col, slope = _f32(rng.standard_normal((16, 1))), _f32(rng.random((16, 32)))
    r = run_clean_twice("r12_k05_rowexpand_mode2_and_prelu.pto", {"arg0": a, "arg1": r8, "arg2": col, "arg3": slope})
    out = {k: r.outputs[k].reshape(16, 32) for k in ("arg4", "arg5", "arg6", "arg7", "arg8")}
    repeated = np.tile(r8, (1, 4))  # mode 2: r[i, j mod 8]
    np.testing.assert_array_equal(out["arg4"], a + repeated)
    np.testing.assert_array_equal(out["arg5"], np.minimum(repeated, a))
    np.testing.assert_array_equal(out["arg6"], np.broadcast_to(col, (16, 32)))
    np.testing.assert_array_equal(out["arg7"], np.where(a > 0, a, a * slope))
    np.testing.assert_array_equal(out["arg8"], np.where(a > 0, a, a * np.float32(0.125)))


def test_truncated_and_floored_remainders_with_mixed_signs():
    rng = _rng(6)
    a, b = _f32(rng.standard_normal((8, 64)) * 10), _f32(rng.standard_normal((8, 64)) * 3)
    r = run_clean_twice("r12_k06_fmod_rem_signs.pto", {"arg0": a, "arg1": b})
    out = {k: r.outputs[k].reshape(8, 64) for k in ("arg2", "arg3", "arg4", "arg5")}
    tol = {"rtol": 1e-5, "atol": 1e-5}
    np.testing.assert_allclose(out["arg2"], np.fmod(a, b), **tol)
    np.testing.assert_allclose(out["arg3"], a - np.floor(a / b) * b, **tol)
    np.testing.assert_allclose(out["arg4"], np.fmod(a, np.float32(-3)), **tol)
    np.testing.assert_allclose(out["arg5"], a - np.floor(a / np.float32(2.5)) * np.float32(2.5), **tol)


def test_column_product_and_first_argmax_argmin_over_runtime_rows():
    n = 11
    x = _f32(_rng(7).random((n, 32)) + 0.5)
    x[7, 5] = x[3, 5] = x[:, 5].max() + 1  # a tie: the first row wins
    r = run_clean_twice("r12_k07_col_prod_argminmax_ragged.pto", {"arg0": x}, {"arg4": n})
    np.testing.assert_allclose(r.outputs["arg1"].reshape(32), x.prod(0), rtol=1e-5)
    np.testing.assert_array_equal(r.outputs["arg2"].reshape(32), x.argmax(0))
    np.testing.assert_array_equal(r.outputs["arg3"].reshape(32), x.argmin(0))


def test_ttrans_of_a_16x8_block_and_fillpad_expand_with_max_pad():
    rng = _rng(8)
    x, h = _f32(rng.standard_normal((16, 8))), rng.standard_normal((5, 12)).astype(np.float16)
    r = run_clean_twice("r12_k08_ttrans_fillpad_expand.pto", {"arg0": x, "arg2": h})
    np.testing.assert_array_equal(r.outputs["arg1"].reshape(8, 16), x.T)
    padded = np.full((16, 32), np.inf, np.float16)
    padded[:5, :12] = h
    np.testing.assert_array_equal(r.outputs["arg3"].reshape(16, 32), padded)
    np.testing.assert_array_equal(r.outputs["arg4"].reshape(16), padded.min(1))


def test_packed_masks_select_f32_by_tcmp_and_i32_by_tcmps():
    rng = _rng(9)
    a, b = _f32(rng.standard_normal((2, 8, 64)))
    q = rng.integers(0, 10, (8, 64)).astype(np.int32)
    r = run_clean_twice("r12_k09_cmp_sel_i32_f32.pto", {"arg0": a, "arg1": b, "arg2": q})
    np.testing.assert_array_equal(r.outputs["arg3"].reshape(8, 64), np.where(a < b, a * 2, b))
    np.testing.assert_array_equal(r.outputs["arg4"].reshape(8, 64), np.where(q == 7, q, -1))


def test_int8_symmetric_quantisation_saturates_and_dequantises_per_row():
    rng = _rng(10)
    x = _f32(rng.standard_normal((16, 64)) * 50)
    inv, scale, off = _f32(rng.random((16, 1)) * 3 + 0.5), _f32(rng.random((16, 1))), _f32(rng.standard_normal((16, 1)))
    r = run_clean_twice("r12_k10_quant_dequant_rows.pto", {"arg0": x, "arg1": inv, "arg2": scale, "arg3": off})
    q = np.clip(np.rint(x * inv), -128, 127).astype(np.int8)
    assert (np.abs(x * inv) > 127).any()  # some saturate
    np.testing.assert_array_equal(r.outputs["arg4"].reshape(16, 64), q)
    np.testing.assert_allclose(r.outputs["arg5"].reshape(16, 64), (_f32(q) - off) * scale, rtol=1e-6)


def test_axpy_of_an_f16_source_into_an_f32_accumulator_then_addsc_and_subsc():
    rng = _rng(11)
    x = rng.standard_normal((16, 32)).astype(np.float16)
    acc, b = _f32(rng.standard_normal((2, 16, 32)))
    r = run_clean_twice("r12_k11_axpy_f16_into_f32_taddsc.pto", {"arg0": x, "arg1": acc, "arg2": b})
    half = _f32(x) * np.float32(0.5)
    twice = (acc + half) + half
    np.testing.assert_allclose(r.outputs["arg3"].reshape(16, 32), twice, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(r.outputs["arg4"].reshape(16, 32), twice + 1.5 + b, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(r.outputs["arg5"].reshape(16, 32), twice - 1.5 + b, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("diag", [-2, 0, 3])
def test_triangular_masks_with_a_runtime_diagonal_and_a_descending_index_row(diag):
    x = _f32(_rng(12).standard_normal((16, 16)))
    r = run_clean_twice("r12_k12_causal_mask_tri_ci.pto", {"arg0": x}, {"arg3": diag, "arg4": 100})
    i, j = np.indices((16, 16))
    lower, upper = _f32(j <= i + diag), _f32(j >= i)
    np.testing.assert_allclose(r.outputs["arg1"].reshape(16, 16), x * lower + upper * np.float32(-1e4))
    np.testing.assert_array_equal(r.outputs["arg2"].reshape(32), 100 - np.arange(32))


@pytest.mark.parametrize("blocks", [1, 30])
def test_c2v_split_by_columns_in_two_waves_of_blocks(blocks):
    rng = _rng(13)
    a = rng.standard_normal((16 * blocks, 32)).astype(np.float16)
    b = rng.standard_normal((32, 32)).astype(np.float16)
    r = run_clean_twice("r12_k13_c2v_left_right_blocks_waves.pto", {"arg0": a, "arg1": b}, blocks=blocks)
    scale = np.repeat(blocks - np.arange(blocks), 16)[:, None]
    np.testing.assert_allclose(r.outputs["arg2"].reshape(16 * blocks, 32), (_f32(a) @ _f32(b)) * scale,
                               rtol=1e-5, atol=1e-4)
    assert r.blocks == blocks
    for kind, per_block in (("aic", 1), ("aiv", 2)):  # each block: one cube core and its two vector cores
        ran = sorted(b for c in r.cores if c.kind == kind for b in c.blocks)
        assert ran == sorted(list(range(blocks)) * per_block), (kind, ran)
    if blocks > 24:  # more blocks than core groups: the later wave's dispatch is on the path
        assert "block dispatch between waves" in r.bound, r.bound


@pytest.mark.parametrize("n", [1, 20])
def test_v2c_stream_of_more_tiles_than_fifo_slots(n):
    rng = _rng(14)
    x = rng.standard_normal((32 * n, 32)).astype(np.float16)
    w = rng.standard_normal((32, 16)).astype(np.float16)
    r = run_clean_twice("r12_k14_v2c_loop_deeper_than_fifo.pto", {"arg0": x, "arg1": w}, {"arg3": n})
    want = _f32(x + np.float16(1)) @ _f32(w)
    np.testing.assert_allclose(r.outputs["arg2"].reshape(32 * n, 16), want, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize(("n", "blocks"), [(1, 1), (2, 1), (7, 2), (5, 26)])
def test_cross_core_signals_both_ways_over_a_two_slot_workspace(n, blocks):
    rng = _rng(15)
    x = rng.standard_normal((32 * n * blocks, 32)).astype(np.float16)
    w = rng.standard_normal((32, 32)).astype(np.float16)
    ws = np.zeros((64 * blocks, 32), np.float32)
    r = run_clean_twice("r12_k15_crosscore_two_slot_handshake.pto", {"arg0": x, "arg1": w, "arg2": ws}, {"arg4": n},
             blocks=blocks)
    want = np.maximum(_f32(x) @ _f32(w), 0) * 0.5
    np.testing.assert_allclose(r.outputs["arg3"].reshape(-1, 32), want, rtol=1e-5, atol=1e-4)


def test_a_bf16_stream_with_little_compute_per_load_is_load_bound():
    n = 64
    x = _rng(16).standard_normal((n, 512)).astype(bfloat16)
    r = run_clean_twice("r12_k16_bf16_stream_rowsum_load_bound.pto", {"arg0": x}, {"arg2": n})
    want = _f32(x).reshape(-1, 8, 512).sum(0).sum(1)
    np.testing.assert_allclose(r.outputs["arg1"].reshape(8), want, rtol=1e-5, atol=1e-3)
    assert r.bound.startswith("MTE2-bound: "), r.bound
    assert r.bound_pipe == "MTE2"
    big = pyptoemu.run(KERNELS / "r12_k16_bf16_stream_rowsum_load_bound.pto", args={"arg2": 1 << 16}, data=False)
    assert big.bound.startswith("MTE2-bound: "), big.bound


def test_a_load_compute_store_chain_in_one_tile_pair_is_latency_bound_on_its_war_wait():
    n = 64
    x = _rng(17).standard_normal((n, 64)).astype(np.float16)
    r = run_clean_twice("r12_k17_f16_eight_step_chain.pto", {"arg0": x}, {"arg2": n})
    f = np.float16
    u = np.maximum(np.sqrt(np.abs(np.exp(x) * x + f(1))), f(1e-3))
    np.testing.assert_allclose(_f32(r.outputs["arg1"].reshape(n, 64)), _f32(np.log(f(1) / u)), rtol=2e-3, atol=2e-3)
    # the next load waits for the store of the same tile: the wait named is MTE3->MTE2, from the loop (17) to the load (20)
    assert r.bound.startswith("latency-bound: "), r.bound
    assert "waiting on MTE3->MTE2 flags at lines 17-20" in r.bound, r.bound


@pytest.mark.parametrize("kt", [1, 3])
def test_bf16_gemv_k_loop_with_bias_first_and_relu_on_the_f16_store(kt):
    rng = _rng(18)
    x = rng.standard_normal((1, 64 * kt)).astype(bfloat16)
    w = rng.standard_normal((64 * kt, 32)).astype(bfloat16)
    bias = _f32(rng.standard_normal((1, 32)))
    r = run_clean_twice("r12_k18_bf16_gemv_kloop_bias_relu_f16.pto", {"arg0": x, "arg1": w, "arg2": bias}, {"arg4": kt})
    want = np.maximum(_f32(x) @ _f32(w) + bias, 0).astype(np.float16)
    np.testing.assert_allclose(_f32(r.outputs["arg3"].reshape(1, 32)), _f32(want), rtol=1e-3, atol=1e-3 * kt)
    assert r.bound.startswith("MTE2-bound: "), r.bound


def test_byte_offset_gather_then_row_scatter_by_per_column_permutations():
    rng = _rng(19)
    src = _f32(rng.standard_normal((16, 32)))
    flat = rng.integers(0, 16 * 32, (8, 32))
    perm = np.stack([rng.permutation(8) for _ in range(32)], 1).astype(np.int32)
    r = run_clean_twice("r12_k19_gatherb_scatter_prefetch.pto", {"arg0": src, "arg1": (flat * 4).astype(np.uint32), "arg2": perm})
    d = src.reshape(-1)[flat]
    np.testing.assert_array_equal(r.outputs["arg3"].reshape(8, 32), d)
    z = np.empty_like(d)
    z[perm, np.arange(32)] = d
    np.testing.assert_array_equal(r.outputs["arg4"].reshape(8, 32), z)


def test_a_gm_header_read_by_load_scalar_drives_rows_and_is_written_back(tmp_path):
    name = "r12_k20_header_driven_rows_addptr.pto"
    x = _f32(_rng(20).standard_normal((20, 32)))
    y = np.full((20, 32), 7, np.float32)
    r = run_clean(name, {"arg0": np.array([5, 9, 0], np.int32), "arg1": x, "arg2": y})
    want = y.copy()
    want[9:14] = x[9:14] * 2
    np.testing.assert_array_equal(r.outputs["arg2"].reshape(20, 32), want)
    np.testing.assert_array_equal(r.outputs["arg0"], [5, 9, -5])
    # timing-only cannot know the header: a located refusal, exit 2
    code, out = cli_json(name, {}, tmp_path, "--no-data")
    assert code == 2, out
    assert f"{name}:13:5: load_scalar reads a value into the scalar unit" in out, out


def test_one_tile_of_a_16_tib_view_runs_timing_only_and_is_refused_with_data(tmp_path):
    name = "r12_k21_one_tile_of_a_huge_view.pto"
    timing = pyptoemu.run(KERNELS / name, args={"arg2": 123456789}, data=False)
    assert timing.findings == [] and timing.cycles > 0
    code, out = cli_json(name, {"arg2": 123456789}, tmp_path)
    assert code == 2, out
    assert (f"{name}:12:5: the view made here over arg0 reaches 4398046511104 elements (16384.0 GiB); the emulator "
            "generates at most 1 GiB of stand-in data per argument") in out, out


def test_int8_gemm_with_k_of_80_in_two_steps_of_40_valid_of_64():
    rng = _rng(22)
    a = rng.integers(-128, 128, (16, 80)).astype(np.int8)
    b = rng.integers(-128, 128, (80, 32)).astype(np.int8)
    r = run_clean_twice("r12_k22_i8_gemm_odd_k_two_steps.pto", {"arg0": a, "arg1": b})
    np.testing.assert_array_equal(r.outputs["arg2"].reshape(16, 32), a.astype(np.int32) @ b.astype(np.int32))


@pytest.mark.parametrize("n", [16, 96])
def test_hand_synced_double_buffer_with_event_ids_from_an_array(n):
    x = _f32(_rng(23).standard_normal((n, 64)))
    r = run_clean_twice("r12_k23_level3_eventid_array_double_buffer.pto", {"arg0": x}, {"arg2": n})
    np.testing.assert_allclose(r.outputs["arg1"].reshape(n, 64), (x + x) * 0.5 + 1, rtol=1e-6)
    assert r.sync_mode == "asis"


def test_a_3d_view_as_rows_and_one_row_f16_reductions_into_single_elements():
    x = _rng(24).standard_normal((4, 2, 16)).astype(np.float16)
    r = run_clean_twice("r12_k24_one_row_tiles_3d_view.pto", {"arg0": x})
    t = _f32(x.reshape(8, 16))
    e = np.exp(t - t.max(1, keepdims=True))
    np.testing.assert_allclose(_f32(r.outputs["arg1"].reshape(8, 16)), e / e.sum(1, keepdims=True), rtol=2e-3, atol=2e-3)
    s = r.outputs["arg2"].reshape(2)
    assert s[0] == t[0].max()
    np.testing.assert_allclose(float(s[1]), t[0].sum(), rtol=2e-3, atol=4e-3)


@pytest.mark.parametrize(("n", "blocks"), [(100, 60), (1000, 60), (37, 3)])
def test_grid_stride_blocks_in_two_waves_and_empty_blocks(n, blocks):
    x = _rng(25).standard_normal((n, 32)).astype(np.float16)
    r = run_clean_twice("r12_k25_spmd_grid_stride_60_blocks.pto", {"arg0": x}, {"arg2": n}, blocks=blocks)
    tiles = -(-n // 8)
    scale = np.repeat(np.arange(tiles) % blocks + 1, 8)[:n, None].astype(np.float16)
    np.testing.assert_array_equal(r.outputs["arg1"].reshape(n, 32), np.abs(x) * scale)
    if (n, blocks) == (100, 60):  # 13 tiles: blocks 48..59 of the second wave are empty, their dispatch is all
        assert r.bound.startswith("dispatch-bound: "), r.bound
