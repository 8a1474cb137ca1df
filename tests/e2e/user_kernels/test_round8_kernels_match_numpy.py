"""Eighth red-team round: kernels written as other PTO tools' users write them, over the ops and forms
earlier rounds left out (tests/e2e/user_kernels/kernels/r8_k*.pto, the first lines of each say what it
does): partial elementwise ops with a smaller source, column statistics and broadcasts in f16,
integer bit manipulation (i32, i16), compare/select on a ragged f16 region, floored and truncated
remainders, a GEMV with bias synchronised by op-class events at level 3, transpose / concat /
fillpad_expand of a run-time ragged bf16 block, a 5-D view and DN views with row broadcasts, and a
scalar-only kernel (load_scalar, a helper returning two values, an scf.while with iter_args, -inf
written as its MLIR bit pattern), SPMD column sums in waves with atomic adds, an A5 embedding bag
(mgather, bf16 tmul, mscatter add, tpack), a cube->vector FIFO loop with tmatmul.bias and a bf16
SiLU epilogue, and a tile-level streaming log-sum-exp carrying tiles through iter_args. Each runs through ``pyptoemu.run`` against NumPy with no finding,
and through the command line (``--json``) with the same cycles as a ``--no-data`` run.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from tests.e2e.user_kernels.running import cli_json, run_clean

BF16 = ml_dtypes.bfloat16


_run, _cli = run_clean, cli_json


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def test_partial_ops_take_the_valid_source_where_the_other_is_not_valid():
    a = _rng(1).standard_normal((16, 32)).astype(np.float32)
    b = _rng(2).standard_normal((10, 20)).astype(np.float32)
    o = _run("r8_k01_partial_ops_ragged.pto", {"arg0": a, "arg1": b}).outputs["arg2"].reshape(16, 128)
    for k, f in enumerate([np.add, np.maximum, np.minimum, np.multiply]):
        want = a.copy()
        want[:10, :20] = f(a[:10, :20], b)
        np.testing.assert_array_equal(o[:, 32 * k:32 * k + 32], want)


def test_column_statistics_and_column_broadcasts_in_f16():
    x = _rng(3).standard_normal((32, 64)).astype(np.float16)
    s = _rng(4).uniform(0.5, 2, (4, 64)).astype(np.float16)
    r = _run("r8_k02_col_family_f16.pto", {"arg0": x, "arg1": s})
    mx, mn = x.max(0), x.min(0)
    pr = np.prod(s.astype(np.float32), 0).astype(np.float16)
    want = [np.exp((x - mx).astype(np.float32)).astype(np.float16), ((x - mn) / pr).astype(np.float16),
            np.minimum(np.maximum(np.broadcast_to(mn, (32, 64)), pr), mx)]
    for k, w in enumerate(want):
        got = r.outputs[f"arg{2 + k}"].reshape(32, 64).astype(np.float32)
        np.testing.assert_allclose(got, w.astype(np.float32), rtol=1e-3, atol=1e-3)


def test_integer_bit_ops_on_i32_and_i16_match_numpy_bit_for_bit():
    rng = _rng(5)
    a = rng.integers(-2**31, 2**31 - 1, (8, 64), dtype=np.int64).astype(np.int32)
    b = rng.integers(-2**31, 2**31 - 1, (8, 64), dtype=np.int64).astype(np.int32)
    sh = rng.integers(0, 8, (8, 64)).astype(np.int32)
    c = rng.integers(-2**15, 2**15 - 1, (16, 64)).astype(np.int16)
    r = _run("r8_k03_int_bits_i32_i16.pto", {"arg0": a, "arg1": b, "arg2": sh, "arg3": c})
    np.testing.assert_array_equal(r.outputs["arg4"].reshape(8, 64), (((a ^ b) << sh) | (a & 3855)) ^ np.int32(1431655765))
    np.testing.assert_array_equal(r.outputs["arg5"].reshape(8, 64), ((((b >> 3) >> sh) << 2) & a) | 3)
    np.testing.assert_array_equal(r.outputs["arg6"].reshape(16, 64), (~c) & np.int16(255))


def test_compare_and_select_over_a_ragged_f16_region():
    a = _rng(6).standard_normal((13, 50)).astype(np.float16)
    b = _rng(7).standard_normal((13, 50)).astype(np.float16)
    r = _run("r8_k04_cmp_select_f16_ragged.pto", {"arg0": a, "arg1": b})
    np.testing.assert_array_equal(r.outputs["arg2"].reshape(13, 50), np.where(a < b, a, b))
    np.testing.assert_array_equal(r.outputs["arg3"].reshape(13, 50), np.where(a > b, a, np.float16(-1)))


def test_floored_and_truncated_remainders_divisions_and_log():
    rng = _rng(8)
    a = (rng.standard_normal((8, 8)) * 10).astype(np.float32)
    b = (rng.standard_normal((8, 8)) * 3).astype(np.float32)
    i = rng.integers(-100, 100, (8, 8)).astype(np.int32)
    j = (rng.integers(1, 9, (8, 8)) * rng.choice([-1, 1], (8, 8))).astype(np.int32)
    r = _run("r8_k05_rem_fmod_div_log.pto", {"arg0": a, "arg1": b, "arg2": i, "arg3": j})
    o = r.outputs["arg4"].reshape(8, 48)
    want = [a - np.floor(a / b) * b, np.fmod(a, b), a - np.floor(a / 3) * 3, np.fmod(a, np.float32(3)),
            np.log(2 / np.abs(b)), a / b]
    for k, w in enumerate(want):
        np.testing.assert_allclose(o[:, 8 * k:8 * k + 8], w, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(r.outputs["arg5"].reshape(8, 8), np.mod(i, j))  # sign of the divisor


def test_gemv_with_bias_and_accumulate_synchronised_by_op_class_events(tmp_path):
    rng = _rng(9)
    x = rng.standard_normal((1, 64)).astype(np.float16)
    w = rng.standard_normal((64, 32)).astype(np.float16)
    b = rng.standard_normal((1, 32)).astype(np.float32)
    r = _run("r8_k06_gemv_bias_level3_events.pto", {"arg0": x, "arg1": w, "arg2": b})
    ref = x.astype(np.float32) @ w.astype(np.float32)
    np.testing.assert_allclose(r.outputs["arg3"].reshape(1, 32), ref + b, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(r.outputs["arg4"].reshape(1, 32), 2 * ref, rtol=1e-4, atol=1e-4)
    code, js = _cli("r8_k06_gemv_bias_level3_events.pto", {}, tmp_path)
    code2, js2 = _cli("r8_k06_gemv_bias_level3_events.pto", {}, tmp_path, "--no-data")
    assert (code, code2) == (0, 0) and js["cycles"] == js2["cycles"] == r.cycles


@pytest.mark.parametrize(("n", "m"), [(16, 32), (5, 7), (1, 1)])
def test_transpose_concat_and_fillpad_expand_of_a_run_time_ragged_bf16_block(n, m):
    x = _rng(10 + n).standard_normal((n, m)).astype(BF16)
    r = _run("r8_k07_trans_concat_fillpad_dyn.pto", {"arg0": x}, {"arg1": n, "arg2": m})
    full = np.full((16, 32), np.inf, np.float32)
    full[:n, :m] = x.astype(np.float32)
    big = np.full((32, 64), -np.inf, np.float32)
    big[:n, :m] = x.astype(np.float32)
    np.testing.assert_array_equal(r.outputs["arg3"].reshape(32, 16).astype(np.float32), full.T)
    np.testing.assert_array_equal(r.outputs["arg4"].reshape(32, 64).astype(np.float32), big)
    np.testing.assert_array_equal(r.outputs["arg5"].reshape(16, 64).astype(np.float32), np.concatenate([full, full], 1))


def test_five_d_view_and_dn_views_with_row_broadcasts_reductions_and_argmin(tmp_path):
    x = _rng(11).standard_normal((1, 1, 16, 16, 16)).astype(np.float32)
    rr = _rng(12).standard_normal((256,)).astype(np.float32)
    r = _run("r8_k08_dn_5d_rowexpand.pto", {"arg0": x, "arg1": rr})
    t = x.reshape(256, 16)
    np.testing.assert_array_equal(r.outputs["arg2"].reshape(256, 16), np.clip(t + rr[:, None], -1.5, 1.5))
    np.testing.assert_array_equal(r.outputs["arg3"].reshape(256, 16), np.broadcast_to(rr[:, None], (256, 16)))
    np.testing.assert_allclose(r.outputs["arg4"].reshape(256), np.prod(t, 1), rtol=1e-5)
    np.testing.assert_array_equal(r.outputs["arg5"].reshape(256), t.argmin(1))
    code, js = _cli("r8_k08_dn_5d_rowexpand.pto", {}, tmp_path, "--no-data")
    assert code == 0 and js["cycles"] == r.cycles


@pytest.mark.parametrize("n", [1, 37])
def test_scalar_kernel_with_minus_infinity_as_a_bit_pattern_while_and_a_two_result_call(n):
    """``arith.constant 0xFF800000 : f32`` is how MLIR text writes -inf (a running max starts
    there); the verifier refused it as 'out of range for f32'."""
    x = _rng(13).standard_normal(n).astype(np.float32)
    x[:3] = np.abs(x[:3])
    r = _run("r8_k09_scalar_gm_while_call.pto", {"arg0": x, "arg2": np.zeros(5, np.float32)}, {"arg1": n})
    lead = 0
    while lead < n and x[lead] > 0:
        lead += 1
    total = np.float32(0)
    for v in x:
        total = np.float32(total + v)
    np.testing.assert_allclose(r.outputs["arg2"], [x.max(), total, total / np.float32(n), lead, n], rtol=1e-6)


@pytest.mark.parametrize(("n", "blocks"), [(100, 3), (1000, 60), (5, 4)])
def test_spmd_column_sums_in_waves_with_ragged_tiles_and_atomic_adds(n, blocks):
    x = _rng(14 + n).standard_normal((n, 64)).astype(np.float16)
    r = _run("r8_k12_spmd_colsum_atomic_f16_waves.pto", {"arg0": x, "arg1": np.zeros((1, 64), np.float32)},
             {"arg2": n}, blocks=blocks)
    np.testing.assert_allclose(r.outputs["arg1"].reshape(64), x.astype(np.float32).sum(0), rtol=1e-5, atol=1e-4)
    assert len(r.cores) == min(blocks, 48)


def test_a5_embedding_bag_gather_scale_scatter_add_and_pack():
    rng = _rng(15)
    vocab = 50
    table = rng.standard_normal((vocab, 32)).astype(BF16)
    tok, seg = rng.integers(0, vocab + 5, 16), rng.integers(0, 4, 16)  # some ids past the table (clamped)
    gidx = (tok[:, None] * 32 + np.arange(32)[None, :]).astype(np.int32)
    sidx = (seg[:, None] * 32 + np.arange(32)[None, :]).astype(np.int32)
    w = rng.standard_normal((16, 32)).astype(BF16)
    r = _run("r8_k13_a5_embedding_gather_scatter_add.pto", {"arg0": table, "arg1": gidx, "arg2": w, "arg3": sidx,
             "arg4": np.zeros((4, 32), np.float32)}, {"arg6": vocab})
    prod = (table.reshape(-1)[np.clip(gidx, 0, vocab * 32 - 1)].astype(np.float32) * w.astype(np.float32))
    prod = prod.astype(BF16).astype(np.float32)
    bag = np.zeros(4 * 32, np.float32)
    np.add.at(bag, sidx.reshape(-1), prod.reshape(-1))
    np.testing.assert_allclose(r.outputs["arg4"].reshape(-1), bag, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(r.outputs["arg5"].reshape(16, 32), gidx.astype(np.int16))


def test_cube_to_vector_fifo_loop_with_bias_and_a_bf16_silu_epilogue(tmp_path):
    rng = _rng(16)
    x = rng.standard_normal((32, 32)).astype(np.float16)
    w = rng.standard_normal((32, 96)).astype(np.float16)
    b = rng.standard_normal((1, 96)).astype(np.float32)
    r = _run("r8_k14_c2v_bias_loop_silu_bf16.pto", {"arg0": x, "arg1": w, "arg2": b})
    z = x.astype(np.float32) @ w.astype(np.float32) + b
    np.testing.assert_allclose(r.outputs["arg3"].reshape(32, 96).astype(np.float32), z / (1 + np.exp(-z)),
                               rtol=1.6e-2, atol=1.6e-2)
    assert sorted(c.kind for c in r.cores) == ["aic", "aiv", "aiv"]
    code, js = _cli("r8_k14_c2v_bias_loop_silu_bf16.pto", {}, tmp_path, "--no-data")
    assert code == 0 and js["cycles"] == r.cycles


def test_tile_form_streaming_log_sum_exp_carrying_tiles_through_iter_args():
    x = (_rng(17).standard_normal((16, 256)) * 4).astype(np.float32)
    r = _run("r8_k15_tile_form_online_lse.pto", {"arg0": x})
    m = x.max(1)
    np.testing.assert_allclose(r.outputs["arg1"].reshape(16), m + np.log(np.exp(x - m[:, None]).sum(1)), rtol=1e-5)
