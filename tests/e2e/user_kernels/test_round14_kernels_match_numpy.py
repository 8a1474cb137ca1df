"""Fourteenth red-team round: valid kernels written from the spec alone (kernels/r14_k*), on the ops
earlier rounds used least (taddc, tsubc, tnot, tand, tor, trowexpand, tcolexpand, trowprod,
tcolprod, tprelu, tfmod against trem, ttri, ttrans, taxpy with an f16 source into f32, tscatter,
tgather by index and by mask, tpartadd with a ragged source, tfillpad with a max pad, tcolexpandexpdif,
tcolexpanddiv), odd valid shapes, i16 / i32 / f16 / bf16 dtypes and SPMD waves. Each
is compared with NumPy, and each run is repeated timing-only (``data=False``): the cycles, the
findings and the bound text must be the same to the bit."""

from __future__ import annotations

import numpy as np

from tests.e2e.user_kernels.running import run_clean_twice


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def test_f32_taddc_and_tsubc_of_three_inputs():
    a, b, c = _rng(3).standard_normal((3, 8, 48)).astype(np.float32)
    r = run_clean_twice("r14_k03_f32_taddc_tsubc_three_inputs.pto", {"arg0": a, "arg1": b, "arg2": c})
    np.testing.assert_allclose(r.outputs["arg3"], a + b + c, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(r.outputs["arg4"], a - b + c, rtol=1e-5, atol=1e-6)


def test_i16_not_and_or():
    a, b = _rng(4).integers(-32768, 32767, (2, 16, 32), dtype=np.int16)
    r = run_clean_twice("r14_k04_i16_tnot_tand_tor.pto", {"arg0": a, "arg1": b})
    np.testing.assert_array_equal(r.outputs["arg2"], ~a)
    np.testing.assert_array_equal(r.outputs["arg3"], a & b)
    np.testing.assert_array_equal(r.outputs["arg4"], a | b)


def test_f16_row_expand_and_column_expand():
    s = _rng(5).standard_normal((16, 16)).astype(np.float16)
    r = run_clean_twice("r14_k05_f16_rowexpand_colexpand.pto", {"arg0": s})
    np.testing.assert_array_equal(r.outputs["arg1"], np.repeat(s[:, :1], 64, axis=1))
    np.testing.assert_array_equal(r.outputs["arg2"], np.repeat(s[:1, :], 8, axis=0))


def test_f32_row_and_column_products():
    x = _rng(6).uniform(0.8, 1.25, (8, 16)).astype(np.float32)
    r = run_clean_twice("r14_k06_f32_row_and_column_products.pto", {"arg0": x})
    np.testing.assert_allclose(r.outputs["arg1"][:, 0], x.prod(1), rtol=1e-5)
    np.testing.assert_allclose(r.outputs["arg2"][0], x.prod(0), rtol=1e-5)


def test_f16_prelu_with_a_slope_per_element():
    a, s = _rng(7).uniform(-4, 4, (2, 16, 32)).astype(np.float16)
    r = run_clean_twice("r14_k07_f16_prelu_per_element_slope.pto", {"arg0": a, "arg1": s})
    np.testing.assert_array_equal(r.outputs["arg2"], np.where(a > 0, a, a * s))


def test_f32_fmod_is_truncated_and_rem_is_floored():
    a = _rng(8).uniform(-20, 20, (8, 32)).astype(np.float32)
    b = _rng(9).choice(np.array([-3.5, -2.0, 1.5, 4.0], np.float32), (8, 32))
    r = run_clean_twice("r14_k08_f32_fmod_truncated_vs_rem_floored.pto", {"arg0": a, "arg1": b})
    np.testing.assert_allclose(r.outputs["arg2"], np.fmod(a, b), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(r.outputs["arg3"], a - np.floor(a / b) * b, rtol=1e-5, atol=1e-5)


def test_f32_lower_and_upper_triangular_masks():
    x = _rng(10).standard_normal((16, 16)).astype(np.float32)
    r = run_clean_twice("r14_k09_f32_ttri_lower_and_upper_masks.pto", {"arg0": x})
    i, j = np.indices((16, 16))
    lo = (j <= i + 1).astype(np.float32)
    np.testing.assert_array_equal(r.outputs["arg1"], lo)
    np.testing.assert_array_equal(r.outputs["arg2"], np.where(j < i - 2, 0, 1).astype(np.float32))
    np.testing.assert_array_equal(r.outputs["arg3"], x * lo)


def test_f32_transpose_of_a_16x8_tile():
    x = _rng(11).standard_normal((16, 8)).astype(np.float32)
    r = run_clean_twice("r14_k10_f32_transpose_16x8.pto", {"arg0": x})
    np.testing.assert_array_equal(r.outputs["arg1"], x.T)


def test_taxpy_of_an_f16_source_into_an_f32_accumulator():
    t = _rng(12).standard_normal((8, 32)).astype(np.float16)
    d = _rng(13).standard_normal((8, 32)).astype(np.float32)
    r = run_clean_twice("r14_k11_taxpy_f16_into_f32_accumulator.pto", {"arg0": t, "arg1": d})
    step = t.astype(np.float32) * np.float32(1.5)
    np.testing.assert_allclose(r.outputs["arg1"], d + step + step, rtol=1e-3, atol=1e-3)


def test_i32_scatter_rows_by_index_later_rows_win():
    src = _rng(14).integers(-1000, 1000, (4, 16), dtype=np.int32)
    idx = _rng(15).integers(0, 8, (4, 16), dtype=np.int32)
    d = np.full((8, 16), -1, np.int32)
    r = run_clean_twice("r14_k12_i32_scatter_rows_by_index.pto", {"arg0": src, "arg1": idx, "arg2": d})
    want = d.copy()
    for i in range(4):
        want[idx[i], np.arange(16)] = src[i]
    np.testing.assert_array_equal(r.outputs["arg2"], want)


def test_f32_gather_by_flat_index():
    src = _rng(16).standard_normal((8, 32)).astype(np.float32)
    idx = _rng(17).integers(0, 256, (8, 16), dtype=np.int32)
    r = run_clean_twice("r14_k13_f32_gather_by_flat_index.pto", {"arg0": src, "arg1": idx})
    np.testing.assert_array_equal(r.outputs["arg2"], src.reshape(-1)[idx])


def test_f32_partadd_with_a_ragged_second_source():
    a = _rng(18).standard_normal((8, 32)).astype(np.float32)
    b = _rng(19).standard_normal((5, 20)).astype(np.float32)
    r = run_clean_twice("r14_k14_f32_partadd_ragged_second_source.pto", {"arg0": a, "arg1": b})
    want = a.copy()
    want[:5, :20] += b
    np.testing.assert_allclose(r.outputs["arg2"], want, rtol=1e-6)


def test_spmd_bf16_rows_exp_shift_with_a_loop_over_the_i64_block_ids():
    """60 blocks on 48 AIV (two waves), 70 tiles grid-stride; the loop counts in i64 (': i64')."""
    from ml_dtypes import bfloat16

    x = _rng(20).uniform(-4, 4, (70 * 8, 64)).astype(bfloat16)
    r = run_clean_twice("r14_k15_spmd_bf16_row_exp_shift_i64_loop.pto", {"arg0": x}, {"arg2": 70}, blocks=60)
    xf = x.astype(np.float32)
    want = np.exp(xf - xf.max(1, keepdims=True))
    np.testing.assert_allclose(r.outputs["arg1"].astype(np.float32), want, rtol=1.6e-2, atol=1e-6)


def test_f16_ragged_tile_filled_with_max_pad_then_row_min():
    x = _rng(21).uniform(-100, 100, (5, 20)).astype(np.float16)
    r = run_clean_twice("r14_k16_f16_ragged_fillpad_max_then_row_min.pto", {"arg0": x})
    want = np.full(8, np.inf, np.float16)  # pad max of a float type is +inf (pto-text-format §5.5)
    want[:5] = x.min(1)
    np.testing.assert_array_equal(r.outputs["arg1"][:, 0], want)


def test_f32_column_expand_expdif_then_divide():
    a = _rng(22).standard_normal((8, 32)).astype(np.float32)
    b = _rng(23).standard_normal((1, 32)).astype(np.float32)
    c = _rng(24).uniform(0.5, 2, (1, 32)).astype(np.float32)
    r = run_clean_twice("r14_k17_f32_colexpand_expdif_then_div.pto", {"arg0": a, "arg1": b, "arg2": c})
    np.testing.assert_allclose(r.outputs["arg3"], np.exp(a - b) / c, rtol=1e-5)


def test_f32_gather_keeps_the_even_columns():
    src = _rng(25).standard_normal((8, 32)).astype(np.float32)
    r = run_clean_twice("r14_k18_f32_gather_even_columns_mask.pto", {"arg0": src})
    np.testing.assert_array_equal(r.outputs["arg1"], src[:, ::2])


def test_c2v_unsplit_int8_product_popped_by_sub_block_zero_only():
    """Two blocks (one per core group): the i32 accumulator of an int8 matmul goes whole through
    the FIFO (split = 0) to sub-block 0, which converts and scales it."""
    a = _rng(26).integers(-128, 128, (64, 32), dtype=np.int8)
    b = _rng(27).integers(-128, 128, (32, 32), dtype=np.int8)
    r = run_clean_twice("r14_k19_c2v_unsplit_i8_matmul_to_subblock0.pto", {"arg0": a, "arg1": b}, {"arg3": 64},
                        blocks=2)
    want = (a.astype(np.int32) @ b.astype(np.int32)).astype(np.float32) * np.float32(0.25)
    np.testing.assert_array_equal(r.outputs["arg2"], want)
