"""Eleventh red-team round: valid kernels written from the spec alone with ops and combinations no
earlier round used (kernels/r11_k05.. and later), each compared with NumPy."""

from __future__ import annotations

import numpy as np
from ml_dtypes import bfloat16

from tests.e2e.user_kernels.running import run_clean


def _f32(a: np.ndarray) -> np.ndarray:
    return a.astype(np.float32)


def test_f16_subc_min_subs_on_a_ragged_block():
    rng = np.random.default_rng(5)
    a, b, c = (rng.standard_normal((16, 20)).astype(np.float16) for _ in range(3))
    r = run_clean("r11_k05_f16_subc_min_subs_ragged.pto", {"arg0": a, "arg1": b, "arg2": c})
    d = (_f32(a) - _f32(b) + _f32(c)).astype(np.float16)
    want = (_f32(np.minimum(d, a)) - 0.5).astype(np.float16)
    np.testing.assert_allclose(_f32(r.outputs["arg3"].reshape(16, 20)), _f32(want), rtol=1e-3, atol=1e-3)


def test_fillpad_inplace_with_min_pad_lets_a_whole_tile_rowmax_see_only_the_loaded_columns():
    n = 37
    x = np.random.default_rng(6).standard_normal((8, n)).astype(np.float32)
    r = run_clean("r11_k06_fillpad_inplace_then_rowmax.pto", {"arg0": x}, {"arg3": n})
    np.testing.assert_array_equal(r.outputs["arg1"].reshape(8), x.max(1))
    w = r.outputs["arg2"].reshape(8, 64)
    np.testing.assert_array_equal(w[:, :n], x)
    assert np.isneginf(w[:, n:]).all()


def test_spmd_rows_split_by_block_num_with_a_short_last_block():
    n = 40
    x = np.random.default_rng(7).integers(-2**20, 2**20, (n, 32)).astype(np.int32)
    r = run_clean("r11_k07_spmd_rows_from_block_num_i32.pto", {"arg0": x}, {"arg2": n}, blocks=3)
    np.testing.assert_array_equal(r.outputs["arg1"].reshape(n, 32), (x << 2) | 1)


def test_i8_requantised_through_f16_with_round_and_floor():
    q = np.random.default_rng(8).integers(-128, 128, (32, 32)).astype(np.int8)
    r = run_clean("r11_k08_i8_to_f16_scale_back_to_i8.pto", {"arg0": q})
    h = _f32(q.astype(np.float16) * np.float16(0.75))
    away = np.sign(h) * np.floor(np.abs(h) + 0.5)
    np.testing.assert_array_equal(r.outputs["arg1"].reshape(32, 32), np.clip(away, -128, 127).astype(np.int8))
    np.testing.assert_array_equal(r.outputs["arg2"].reshape(32, 32), np.clip(np.floor(h), -128, 127).astype(np.int8))


def test_f16_relu_as_compare_scalar_then_select_scalar():
    a = np.random.default_rng(9).standard_normal((16, 32)).astype(np.float16)
    r = run_clean("r11_k09_f16_relu_by_tcmps_tsels.pto", {"arg0": a})
    np.testing.assert_array_equal(r.outputs["arg1"].reshape(16, 32), np.where(a >= 0, a, np.float16(0)))


def test_bf16_gemm_pushed_up_down_to_two_vector_cores_for_a_row_softmax():
    rng = np.random.default_rng(10)
    a = rng.standard_normal((32, 32)).astype(bfloat16)
    b = rng.standard_normal((32, 64)).astype(bfloat16)
    r = run_clean("r11_k10_bf16_gemm_c2v_rows_softmax.pto", {"arg0": a, "arg1": b})
    s = _f32(a) @ _f32(b)
    e = np.exp(s - s.max(1, keepdims=True))
    np.testing.assert_allclose(r.outputs["arg2"].reshape(32, 64), e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-7)


def test_f16_column_sum_max_min_over_thirteen_valid_rows_of_sixteen():
    rng = np.random.default_rng(11)
    x = rng.standard_normal((13, 48)).astype(np.float16)
    g = (rng.standard_normal((16, 48)) + 100).astype(np.float16)
    r = run_clean("r11_k11_f16_column_reductions_ragged_rows.pto", {"arg0": x, "arg1": g})
    np.testing.assert_allclose(_f32(r.outputs["arg2"].reshape(48)), _f32(x).sum(0), rtol=1e-3, atol=4e-3)
    np.testing.assert_array_equal(r.outputs["arg3"].reshape(48), x.max(0))
    np.testing.assert_array_equal(r.outputs["arg4"].reshape(48), x.min(0))


def test_row_min_of_i16_and_row_prod_and_argmin_of_f32():
    rng = np.random.default_rng(12)
    q = rng.integers(-30000, 30000, (16, 32)).astype(np.int16)
    x = (rng.random((8, 8)) + 0.5).astype(np.float32)
    r = run_clean("r11_k12_row_min_prod_argmin_mixed.pto", {"arg0": q, "arg1": x})
    np.testing.assert_array_equal(r.outputs["arg2"].reshape(16), q.min(1))
    np.testing.assert_allclose(r.outputs["arg3"].reshape(8), x.prod(1), rtol=1e-5)
    np.testing.assert_array_equal(r.outputs["arg4"].reshape(8), x.argmin(1))
