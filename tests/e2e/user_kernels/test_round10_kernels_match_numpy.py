"""Tenth red-team round: valid kernels written from pto-text-format.md alone (kernels/r10_k*.pto, the
first lines of each say what it does), compared with NumPy."""

from __future__ import annotations

import numpy as np

from tests.e2e.user_kernels.running import run_clean


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def test_row_expand_with_an_nd_per_row_operand_repeats_its_eight_columns():
    a = _rng(1).standard_normal((16, 32)).astype(np.float32)
    b = _rng(2).standard_normal((16, 8)).astype(np.float32)
    r = run_clean("r10_k01_rowexpand_nd_per_row_operand.pto", {"arg0": a, "arg1": b})
    per_row = np.tile(b, (1, 4))
    np.testing.assert_array_equal(r.outputs["arg2"].reshape(16, 32), a - per_row)
    np.testing.assert_array_equal(r.outputs["arg3"].reshape(16, 32), np.maximum(per_row, a))


def test_f16_activations_over_one_ragged_row():
    a = _rng(3).standard_normal((1, 40)).astype(np.float16)
    s = _rng(4).uniform(0, 1, (1, 40)).astype(np.float16)
    r = run_clean("r10_k02_f16_activations_one_ragged_row.pto", {"arg0": a, "arg1": s})
    out = {k: v.reshape(1, 40).astype(np.float32) for k, v in r.outputs.items()}
    np.testing.assert_allclose(out["arg2"], np.where(a > 0, a, a * np.float16(0.125)).astype(np.float32), rtol=1e-3)
    np.testing.assert_allclose(out["arg3"], np.where(a > 0, a, a * s).astype(np.float32), rtol=1e-3)
    np.testing.assert_allclose(out["arg4"], np.log(np.abs(a.astype(np.float32))), rtol=1e-3, atol=1e-3)


def test_int8_gemm_with_a_bias_row_stored_plain_and_through_the_fixpipe_relu():
    a = _rng(5).integers(-128, 128, (32, 64)).astype(np.int8)
    b = _rng(6).integers(-128, 128, (64, 32)).astype(np.int8)
    bias = _rng(7).integers(-5000, 5000, (1, 32)).astype(np.int32)
    r = run_clean("r10_k03_i8_gemm_bias_relu_store.pto", {"arg0": a, "arg1": b, "arg2": bias})
    ref = a.astype(np.int32) @ b.astype(np.int32) + bias
    np.testing.assert_array_equal(r.outputs["arg3"].reshape(32, 32), ref)
    np.testing.assert_array_equal(r.outputs["arg4"].reshape(32, 32), np.maximum(ref, 0))


def test_matmul_takes_m_k_n_from_valid_regions_smaller_than_the_tiles():
    a = _rng(8).standard_normal((10, 20)).astype(np.float16)
    b = _rng(9).standard_normal((20, 13)).astype(np.float16)
    c = np.full((16, 16), -7, np.float32)
    r = run_clean("r10_k04_matmul_operands_smaller_than_tiles.pto", {"arg0": a, "arg1": b, "arg2": c})
    out = r.outputs["arg2"].reshape(16, 16)
    np.testing.assert_allclose(out[:10, :13], a.astype(np.float32) @ b.astype(np.float32), rtol=1e-5, atol=1e-5)
    assert (out[10:] == -7).all() and (out[:, 13:] == -7).all()
