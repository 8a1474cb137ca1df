"""Thirteenth red-team round: valid kernels written from the spec alone (kernels/r13_k*), on the ops
earlier rounds used least (tneg, tmin, tabs, taddsc, tsubsc, tsubs, tdivs both ways, column min/max/
argmin, row argmax/argmin/min, tcmps + tsels, per-element and scalar shifts, txor / txors, tlog,
tlrelu, tfmods, trems), odd valid shapes and i16 / i32 / f16 dtypes. Each is compared with NumPy, and
each run is repeated timing-only (``data=False``): the cycles, the findings and the bound text must
be the same to the bit."""

from __future__ import annotations

import numpy as np
import pytest

import pyptoemu
from pyptoemu.errors import InputError
from tests.e2e.user_kernels.running import KERNELS, run_clean, run_clean_twice


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def test_f16_neg_min_abs_clamp_on_13_valid_rows():
    a, b = _rng(1).uniform(-6, 6, (2, 13, 48)).astype(np.float16)
    r = run_clean_twice("r13_k02_f16_neg_min_abs_ragged_rows.pto", {"arg0": a, "arg1": b})
    want = np.minimum(np.abs(np.minimum(-a, b)), np.float16(3))
    np.testing.assert_array_equal(r.outputs["arg2"].reshape(13, 48), want)


def test_f32_addsc_subsc_subs_and_divs_in_both_orders():
    a, b = _rng(2).uniform(-4, 4, (2, 8, 40)).astype(np.float32)
    b[np.abs(b - 1.5) < 0.05] = 3.0  # no division by (almost) zero in 6 / (b - 1.5)
    r = run_clean_twice("r13_k03_f32_addsc_subsc_subs_divs_orders.pto", {"arg0": a, "arg1": b})
    out = {k: r.outputs[k].reshape(8, 40) for k in ("arg2", "arg3", "arg4")}
    np.testing.assert_allclose(out["arg2"], a + np.float32(1.5) + b, rtol=1e-6)
    np.testing.assert_allclose(out["arg3"], (a - np.float32(1.5) + b) / np.float32(6), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out["arg4"], np.float32(6) / (b - np.float32(1.5)), rtol=1e-5)


def test_f16_column_min_max_and_argmin_of_a_7x24_block():
    x = _rng(3).permutation(7 * 24).reshape(7, 24).astype(np.float16)  # distinct: one argmin
    r = run_clean_twice("r13_k04_f16_col_min_max_argmin_7x24.pto", {"arg0": x})
    np.testing.assert_array_equal(r.outputs["arg1"].reshape(24), x.min(0))
    np.testing.assert_array_equal(r.outputs["arg2"].reshape(24), x.max(0))
    np.testing.assert_array_equal(r.outputs["arg3"].reshape(24), x.argmin(0))


def test_f32_row_argmax_argmin_and_min_over_50_columns():
    x = _rng(4).standard_normal((16, 50)).astype(np.float32)
    r = run_clean_twice("r13_k05_f32_row_argmax_argmin_min_50_cols.pto", {"arg0": x})
    np.testing.assert_array_equal(r.outputs["arg1"].reshape(16), x.argmax(1))
    np.testing.assert_array_equal(r.outputs["arg2"].reshape(16), x.argmin(1))
    np.testing.assert_array_equal(r.outputs["arg3"].reshape(16), x.min(1))


def test_cmps_ge_and_sels_floor_values_at_a_threshold_on_a3():
    x = _rng(5).uniform(-1, 1, (16, 32)).astype(np.float32)
    x[0, :4] = 0.25  # on the threshold: kept (ge)
    r = run_clean_twice("r13_k06_cmps_sels_floor_at_threshold.pto", {"arg0": x})
    np.testing.assert_array_equal(r.outputs["arg1"], np.where(x >= np.float32(0.25), x, np.float32(0.25)))


def test_i16_per_element_shifts_and_i32_scalar_and_or_shl_shr():
    rng = _rng(6)
    a = rng.integers(-32768, 32768, (8, 64)).astype(np.int16)
    n = rng.integers(0, 8, (8, 64)).astype(np.int16)
    w = rng.integers(-(2**31), 2**31, (8, 16)).astype(np.int32)
    r = run_clean_twice("r13_k07_int_shifts_and_scalar_bitwise.pto", {"arg0": a, "arg1": n, "arg4": w})
    np.testing.assert_array_equal(r.outputs["arg2"], (a.astype(np.int32) << n).astype(np.int16))
    np.testing.assert_array_equal(r.outputs["arg3"], a >> n)
    want = ((((w & 4095) | 65536) << 3).astype(np.int32)) >> 2
    np.testing.assert_array_equal(r.outputs["arg5"], want)


def test_i16_xor_then_xors_with_their_tmp():
    a, b = _rng(7).integers(-32768, 32768, (2, 4, 128)).astype(np.int16)
    r = run_clean_twice("r13_k08_i16_xor_xors_with_tmp.pto", {"arg0": a, "arg1": b})
    np.testing.assert_array_equal(r.outputs["arg2"], (a ^ b) ^ np.int16(21845))


def test_log_sqrt_rsqrt_chain_and_f16_leaky_relu_then_relu():
    rng = _rng(8)
    x = rng.uniform(1.1, 50, (16, 16)).astype(np.float32)
    h = rng.uniform(-4, 4, (16, 16)).astype(np.float16)
    r = run_clean_twice("r13_k09_log_sqrt_rsqrt_lrelu.pto", {"arg0": x, "arg2": h})
    np.testing.assert_allclose(r.outputs["arg1"], np.sqrt(np.log(x)) / np.sqrt(x), rtol=1e-5)
    leaky = np.where(h > 0, h, h * np.float16(0.125)).astype(np.float16)
    np.testing.assert_allclose(r.outputs["arg3"].astype(np.float32), leaky.astype(np.float32), rtol=1e-3)
    np.testing.assert_array_equal(r.outputs["arg4"], np.maximum(r.outputs["arg3"], np.float16(0)))


def test_fmods_truncates_and_rems_floors_by_a_negative_divisor():
    x = _rng(9).uniform(-10, 10, (8, 32)).astype(np.float32)
    r = run_clean_twice("r13_k10_fmods_rems_signs.pto", {"arg0": x})
    s = np.float32(-2.5)
    np.testing.assert_allclose(r.outputs["arg1"], np.fmod(x, s), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(r.outputs["arg2"], x - np.floor(x / s) * s, rtol=1e-5, atol=1e-5)


def test_spmd_grid_stride_i8_rescale_through_f16_in_waves():
    """60 blocks on 48 AIV (two waves), 70 tiles: blocks 0..9 take two tiles, the rest one."""
    x = _rng(10).integers(-128, 128, (70 * 4, 64)).astype(np.int8)
    r = run_clean_twice("r13_k11_spmd_i8_rescale_grid_stride.pto", {"arg0": x}, {"arg2": 70}, blocks=60)
    np.testing.assert_array_equal(r.outputs["arg1"], np.rint(x.astype(np.float16) * np.float16(0.5)).astype(np.int8))


def test_getval_then_setval_round_trip_through_the_scalar_unit():
    """With data only: a timing-only run refuses a kernel that reads data into the scalar unit, at the
    tgetval (README: its control flow may depend on it)."""
    x = _rng(11).standard_normal((8, 16)).astype(np.float32)
    r = run_clean("r13_k12_getval_setval_scalar_roundtrip.pto", {"arg0": x})
    with pytest.raises(InputError, match="tgetval reads a value into the scalar unit") as err:
        pyptoemu.run(KERNELS / "r13_k12_getval_setval_scalar_roundtrip.pto", data=False)
    assert err.value.loc is not None and (err.value.loc.line, err.value.loc.col) == (20, 5)
    want = x + x[3, 5]
    want[0, 0] = x[0, 0] * np.float32(10)
    np.testing.assert_allclose(r.outputs["arg1"], want, rtol=1e-6)


def test_the_view_dim_read_back_drives_the_row_loop():
    x = _rng(12).standard_normal((24, 32)).astype(np.float32)
    r = run_clean_twice("r13_k13_view_dim_drives_row_loop.pto", {"arg0": x}, {"arg1": 24})
    np.testing.assert_allclose(r.outputs["arg0"], x * x, rtol=1e-6)


def test_bitcast_to_i32_and_back_clears_the_sign_bit():
    x = _rng(13).standard_normal((8, 32)).astype(np.float32)
    x[0, 0], x[0, 1] = -0.0, -np.inf
    r = run_clean_twice("r13_k14_bitcast_clear_sign_bit.pto", {"arg0": x})
    np.testing.assert_array_equal(r.outputs["arg1"].view(np.int32), np.abs(x).view(np.int32))


def test_subset_halves_scaled_and_concatenated_swapped():
    x = _rng(14).standard_normal((16, 64)).astype(np.float32)
    r = run_clean_twice("r13_k15_subset_halves_concat_swapped.pto", {"arg0": x})
    np.testing.assert_allclose(r.outputs["arg1"], np.concatenate([x[8:] * 3, x[:8] * 2], axis=1), rtol=1e-6)


def test_bf16_row_sums_of_12_rows_through_f32():
    from ml_dtypes import bfloat16

    x = _rng(15).standard_normal((12, 64)).astype(bfloat16)
    r = run_clean_twice("r13_k16_bf16_rowsum_via_f32_round.pto", {"arg0": x})
    want = x.astype(np.float32).sum(1, keepdims=True)
    np.testing.assert_allclose(r.outputs["arg1"].astype(np.float32), want, rtol=1.6e-2, atol=1e-2)


def test_f16_row_expand_add_min_and_col_expand_sub_expdif():
    rng = _rng(16)
    x = rng.uniform(-1, 1, (16, 32)).astype(np.float16)
    rcol = rng.uniform(-1, 1, (16, 1)).astype(np.float16)
    crow = rng.uniform(-0.5, 0.5, (1, 32)).astype(np.float16)
    r = run_clean_twice("r13_k17_f16_row_col_expand_family.pto", {"arg0": x, "arg1": rcol, "arg2": crow})
    o1 = np.minimum((x + rcol).astype(np.float16), rcol)
    o2 = np.exp(((x - crow).astype(np.float16) - crow).astype(np.float32))
    np.testing.assert_allclose(r.outputs["arg3"].astype(np.float32), o1.astype(np.float32), rtol=1e-3)
    np.testing.assert_allclose(r.outputs["arg4"].astype(np.float32), o2, rtol=2e-3)


def test_c2v_k_loop_scores_split_by_rows_give_the_softmax_numerator():
    rng = _rng(18)
    a = rng.uniform(-1, 1, (32, 48)).astype(np.float16)
    b = rng.uniform(-1, 1, (48, 32)).astype(np.float16)
    r = run_clean_twice("r13_k19_c2v_kloop_rows_split_row_softmax_num.pto", {"arg0": a, "arg1": b})
    s = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(r.outputs["arg2"], np.exp(s - s.max(1, keepdims=True)), rtol=1e-5 * 48, atol=1e-6)


def test_f32_matmul_bias_on_five_valid_rows():
    rng = _rng(19)
    x, w, bias = _f32s(rng, (5, 24)), _f32s(rng, (24, 16)), _f32s(rng, (1, 16))
    r = run_clean_twice("r13_k20_f32_matmul_bias_five_rows.pto", {"arg0": x, "arg1": w, "arg2": bias})
    np.testing.assert_allclose(r.outputs["arg3"], x @ w + bias, rtol=1e-5 * 24, atol=1e-5)


def _f32s(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)
