"""Eighth red-team round: PyPTO programs written as pypto-lib and upstream users write them
(tests/compiler/user_programs/progs/r8_*.py, the docstring of each says what it computes): a ragged
GELU over orchestration views, a masked row softmax by fillpad, an SPMD bf16 layer norm, a per-row
top-k by sort32/mrgsort/gather, segment sums driven by host reads, a seed-era @pl.program carrying
an online log-sum-exp through init_values, a fused linear+bias+relu split LEFT_RIGHT, int8 row
quantisation, rope + KV-cache append through an inline helper with three Out parameters, and an A5
bf16 residual RMS norm over a dynamic row count. Each runs on the emulator and matches NumPy."""

from __future__ import annotations

import os

import ml_dtypes
import numpy as np
import pytest

import pypto.runtime
from pypto.errors import PyptoError
from pypto.runtime import RunConfig

from .helpers import HERE, load_file

BF16 = ml_dtypes.bfloat16


def _prog(name: str):
    return load_file(os.path.join(HERE, "progs", f"r8_{name}.py"), "r8")


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


@pytest.mark.parametrize("n", [16, 40, 7])
def test_gelu_over_row_views_with_a_ragged_last_block(n):
    mod = _prog("gelu_ragged_rows")
    x = _rng(n).standard_normal((n, 96)).astype(np.float32)
    y = np.full_like(x, np.nan)
    mod.gelu_rows(x, y)
    ref = 0.5 * x * (1 + np.tanh(0.7978845608028654 * (x + 0.044715 * x ** 3)))
    np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-6)
    assert mod.gelu_rows.last_result.launches == -(-n // 16)


@pytest.mark.parametrize("valid", [64, 37, 1])
def test_masked_row_softmax_by_fillpad_min(valid):
    mod = _prog("ragged_softmax_cols")
    x = _rng(valid).standard_normal((16, 64)).astype(np.float32)
    y = np.full_like(x, np.nan)
    mod.masked_softmax(x, y, valid)
    e = np.exp(x[:, :valid] - x[:, :valid].max(1, keepdims=True))
    ref = np.zeros_like(x)
    ref[:, :valid] = e / e.sum(1, keepdims=True)
    np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-7)


def test_spmd_layer_norm_in_bf16_runs_one_block_per_core():
    mod = _prog("spmd_layernorm_bf16")
    rng = _rng(3)
    x = rng.standard_normal((32, 128)).astype(BF16)
    g = rng.standard_normal((1, 128)).astype(np.float32)
    b = rng.standard_normal((1, 128)).astype(np.float32)
    y = np.zeros((32, 128), BF16)
    mod.layer_norm_bf16(x, g, b, y)
    xf = x.astype(np.float32)
    m = xf.mean(1, keepdims=True)
    ref = (xf - m) / np.sqrt(((xf - m) ** 2).mean(1, keepdims=True) + 1e-5) * g + b
    np.testing.assert_allclose(y.astype(np.float32), ref, rtol=1.6e-2, atol=1.6e-2)
    assert len(mod.layer_norm_bf16.last_result.cores) == 4


def test_top_k_per_row_by_sort_merge_and_mask_gathers():
    mod = _prog("topk_rows_spmd")
    x = _rng(4).standard_normal((4, 512)).astype(np.float32)
    v, i = np.zeros((4, 8), np.float32), np.zeros((4, 8), np.int32)
    mod.topk_rows(x, v, i)
    ref = -np.sort(-x, 1)[:, :8]
    np.testing.assert_array_equal(v, ref)
    np.testing.assert_array_equal(np.take_along_axis(x, i, 1), ref)


def test_segment_sums_with_bounds_read_on_the_host_and_an_empty_segment():
    mod = _prog("read_driven_segments")
    x = _rng(5).standard_normal((40, 32)).astype(np.float32)
    off = np.array([[0, 5, 21, 21, 40]], np.int32)
    out, cnt = np.full((4, 32), np.nan, np.float32), np.zeros((1, 1), np.int32)
    mod.segment_sums(x, off, out, cnt)
    ref = np.stack([x[a:b].sum(0) for a, b in zip(off[0, :-1], off[0, 1:], strict=True)])
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)
    assert cnt[0, 0] == 4


@pytest.mark.parametrize("strategy", ["Default", "PTOAS"])
def test_program_online_log_sum_exp_through_init_values_on_row_views(strategy):
    mod = _prog("program_online_softmax_stats")
    x = (_rng(6).standard_normal((32, 128)) * 3).astype(np.float32)
    r = pypto.runtime.run(mod.OnlineLse, x, strategy=strategy)
    m = x.max(1, keepdims=True)
    np.testing.assert_allclose(r.outputs[0], m + np.log(np.exp(x - m).sum(1, keepdims=True)), rtol=1e-5, atol=1e-5)
    assert r.launches == 2 and not r.findings


def test_fused_linear_bias_relu_split_left_right_with_a_four_slot_ring():
    mod = _prog("linear_bias_relu_split")
    rng = _rng(7)
    x = rng.standard_normal((40, 72)).astype(np.float16)
    w = rng.standard_normal((72, 50)).astype(np.float16)
    b = rng.standard_normal((1, 50)).astype(np.float16)
    y = np.zeros((40, 50), np.float16)
    mod.linear_relu(x, w, b, y)
    ref = np.maximum(x.astype(np.float32) @ w.astype(np.float32) + b.astype(np.float32), 0)
    np.testing.assert_allclose(y.astype(np.float32), ref, rtol=1e-3, atol=1e-3 * np.sqrt(72))
    assert sorted(c.kind for c in mod.linear_relu.last_result.cores) == ["aic", "aiv", "aiv"]


def test_int8_row_quantisation_and_dequantisation():
    mod = _prog("int8_row_quant")
    x = (_rng(8).standard_normal((32, 64)) * 5).astype(np.float32)
    q, s, xd = np.zeros((32, 64), np.int8), np.zeros((32, 1), np.float32), np.zeros((32, 64), np.float32)
    mod.quant_rows(x, q, s, xd)
    sref = np.maximum(np.abs(x).max(1, keepdims=True), 1e-8) * np.float32(1 / 127)
    v = (x / sref).astype(np.float16).astype(np.float32)  # through f16, as the program converts
    qref = np.clip(np.sign(v) * np.floor(np.abs(v) + 0.5), -128, 127).astype(np.int8)
    np.testing.assert_allclose(s, sref, rtol=1e-6)
    np.testing.assert_array_equal(q, qref)
    np.testing.assert_allclose(xd, qref * sref, rtol=1e-6)


def test_rope_and_kv_cache_append_through_an_inline_helper_with_three_outs():
    mod = _prog("rope_kv_cache_inline")
    rng = _rng(9)
    steps, d, length, pos0 = 3, 64, 16, 5
    q, k, v = (rng.standard_normal((steps, d)).astype(np.float32) for _ in range(3))
    ang = np.arange(length)[:, None] * (1 / 10000 ** (np.arange(32) / 32))[None, :]
    cos, sin = np.cos(ang).astype(np.float32), np.sin(ang).astype(np.float32)
    qo = np.zeros_like(q)
    kc, vc = (rng.standard_normal((length, d)).astype(np.float32) for _ in range(2))
    kref, vref = kc.copy(), vc.copy()
    mod.decode_steps(q, k, v, np.concatenate([cos, cos], 1), np.concatenate([sin, sin], 1), qo, kc, vc, pos0)

    def rope(x, p):
        return np.concatenate([x[:32] * cos[p] - x[32:] * sin[p], x[32:] * cos[p] + x[:32] * sin[p]])

    for t in range(steps):
        kref[pos0 + t], vref[pos0 + t] = rope(k[t], pos0 + t), v[t]
    np.testing.assert_allclose(qo, np.stack([rope(q[t], pos0 + t) for t in range(steps)]), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(kc, kref, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(vc, vref)


def test_a5_bf16_residual_rms_norm_over_a_dynamic_row_count():
    """bf16 tile adds exist on A5 only: the jit's parse-time type checks must use the platform's
    instruction facts (they used A2/A3's, refusing the program with config platform a5)."""
    mod = _prog("a5_dynamic_residual_rmsnorm")
    rng = _rng(10)
    for m in (16, 37):
        x, r = (rng.standard_normal((m, 128)).astype(BF16) for _ in range(2))
        w = rng.standard_normal((1, 128)).astype(np.float32)
        y, r0 = np.zeros((m, 128), BF16), r.copy()
        mod.residual_rms(x, r, w, y, config=RunConfig(platform="a5"))
        h = (x.astype(np.float32) + r0.astype(np.float32)).astype(BF16).astype(np.float32)
        ref = h / np.sqrt((h * h).mean(1, keepdims=True) + 1e-6) * w
        np.testing.assert_array_equal(r.astype(np.float32), h)
        np.testing.assert_allclose(y.astype(np.float32), ref, rtol=1.6e-2, atol=1.6e-2)
    with pytest.raises(PyptoError, match=r"r8_a5_dynamic_residual_rmsnorm\.py:\d+:\d+: error: add: BF16 tiles are not"):
        mod.residual_rms(x, r, w, y, config=RunConfig(platform="a2a3"))
