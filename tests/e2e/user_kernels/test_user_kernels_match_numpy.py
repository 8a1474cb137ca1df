"""Corpus-style kernels written the way other PTO tools write them (tests/e2e/user_kernels/kernels/*.pto), checked against NumPy.

Each test runs one kernel on the emulator, compares every written output with a NumPy reference
(fp32 ~1e-5 relative, fp16 ~1e-3, bf16 ~1.6e-2, matmul tolerances scaled by K) and requires that
the run reports no error findings.
"""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np

import pyptoemu

KERNELS = Path(__file__).resolve().parent / "kernels"
BF16 = ml_dtypes.bfloat16


def _run(name: str, **kw):
    r = pyptoemu.run(KERNELS / name, **kw)
    errors = [str(f) for f in r.findings if f.severity == "error"]
    assert errors == [], errors
    return r


def _rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def test_layernorm_level2_dynamic_rows():
    rng = _rng(1)
    n = 24
    x = (rng.standard_normal((n, 64)) * 3 + 1).astype(np.float32)
    g = rng.standard_normal(64).astype(np.float32)
    b = rng.standard_normal(64).astype(np.float32)
    r = _run("k01_layernorm.pto", inputs={"arg0": x, "arg1": g, "arg2": b}, args={"arg4": n})
    assert r.sync_mode == "auto"
    m = x.mean(1, keepdims=True)
    v = ((x - m) ** 2).mean(1, keepdims=True)
    ref = (x - m) / np.sqrt(v + 1e-5) * g + b
    np.testing.assert_allclose(r.outputs["arg3"].reshape(n, 64), ref, rtol=1e-5, atol=1e-5)


def test_rmsnorm_bf16_compact_types():
    rng = _rng(2)
    n = 48
    x = rng.standard_normal((n, 128)).astype(BF16)
    w = rng.standard_normal(128).astype(BF16)
    r = _run("k02_rmsnorm_bf16.pto", inputs={"arg0": x, "arg1": w}, args={"arg3": n})
    xf = x.astype(np.float32)
    ref = xf / np.sqrt((xf * xf).mean(1, keepdims=True) + 1e-6) * w.astype(np.float32)
    out = r.outputs["arg2"]
    assert out.dtype == BF16
    np.testing.assert_allclose(out.reshape(n, 128).astype(np.float32), ref, rtol=1.6e-2, atol=1e-2)


def test_online_softmax_across_column_blocks():
    rng = _rng(3)
    nb = 3
    x = (rng.standard_normal((16, 64 * nb)) * 4).astype(np.float32)
    x[:, 100:110] += 10  # the row max moves in the second block
    r = _run("k03_online_softmax.pto", inputs={"arg0": x}, args={"arg2": nb})
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(r.outputs["arg1"].reshape(16, -1), e / e.sum(1, keepdims=True), rtol=1e-5,
                               atol=1e-9)


def test_gemm_k_loop_bias_level3_hand_flags():
    rng = _rng(4)
    kb = 3
    a = rng.standard_normal((32, 32 * kb)).astype(np.float16)
    b = rng.standard_normal((32 * kb, 32)).astype(np.float16)
    bias = rng.standard_normal(32).astype(np.float32)
    r = _run("k04_gemm_kloop_bias.pto", inputs={"arg0": a, "arg1": b, "arg2": bias}, args={"arg4": kb})
    assert r.sync_mode == "asis" and r.findings == []
    ref = a.astype(np.float32) @ b.astype(np.float32) + bias
    np.testing.assert_allclose(r.outputs["arg3"].reshape(32, 32), ref, rtol=1e-3, atol=1e-5 * 32 * kb)


def test_gemm_acc_to_vec_epilogue_mixed_function():
    rng = _rng(5)
    a = rng.standard_normal((16, 64)).astype(np.float16)
    b = rng.standard_normal((64, 32)).astype(np.float16)
    bias = rng.standard_normal(32).astype(np.float32)
    r = _run("k05_gemm_epilogue.pto", inputs={"arg0": a, "arg1": b, "arg2": bias}, args={"arg4": 0.5})
    ref = np.maximum(a.astype(np.float32) @ b.astype(np.float32) * 0.5 + bias, 0).astype(np.float16)
    out = r.outputs["arg3"].reshape(16, 32)
    assert out.dtype == np.float16
    assert ((out == 0) == (ref == 0)).all()  # relu zeros exactly where the reference has them
    np.testing.assert_allclose(out.astype(np.float32), ref.astype(np.float32), rtol=1e-3, atol=1e-3)


def test_quantize_dequantize_per_row():
    rng = _rng(6)
    x = (rng.standard_normal((16, 64)) * 50).astype(np.float32)
    x[0, :4] = [0.5, 1.5, 2.5, -2.5]  # rint ties to even
    inv = np.ones(16, np.float32)
    inv[1:] = rng.uniform(0.5, 2, 15).astype(np.float32)
    sc = rng.uniform(0.01, 0.1, 16).astype(np.float32)
    zp = rng.uniform(-3, 3, 16).astype(np.float32)
    zpa = np.round(rng.uniform(100, 150, 16)).astype(np.float32)
    r = _run("k06_quant_dequant.pto", inputs={"arg0": x, "arg1": inv, "arg3": sc, "arg4": zp, "arg7": zpa})
    q = np.clip(np.rint(x * inv[:, None]), -128, 127).astype(np.int8)
    qa = np.clip(np.rint(x * inv[:, None] + zpa[:, None]), 0, 255).astype(np.uint8)
    deq = (q.astype(np.float32) - zp[:, None]) * sc[:, None]
    assert r.outputs["arg2"].dtype == np.int8 and r.outputs["arg6"].dtype == np.uint8
    np.testing.assert_array_equal(r.outputs["arg2"].reshape(16, 64), q)
    assert list(r.outputs["arg2"].reshape(16, 64)[0, :4]) == [0, 2, 2, -2]
    np.testing.assert_array_equal(r.outputs["arg6"].reshape(16, 64), qa)
    np.testing.assert_allclose(r.outputs["arg5"].reshape(16, 64), deq, rtol=1e-5, atol=1e-6)


def test_flash_attention_row_block_one_function():
    rng = _rng(7)
    q = rng.standard_normal((16, 64)).astype(np.float16)
    k = rng.standard_normal((64, 64)).astype(np.float16)
    v = rng.standard_normal((64, 64)).astype(np.float16)
    r = _run("k07_flash_attn_row.pto", inputs={"arg0": q, "arg1": k, "arg2": v})
    assert r.sync_mode == "auto" and r.findings == []
    s = (q.astype(np.float32) @ k.astype(np.float32).T) * 0.125
    p = np.exp(s - s.max(1, keepdims=True))
    ref = (p.astype(np.float16).astype(np.float32) @ v.astype(np.float32)) / p.sum(1, keepdims=True)
    np.testing.assert_allclose(r.outputs["arg3"].reshape(16, 64), ref, rtol=1e-3, atol=1e-5 * 64)
    # the workspace holds P in f16
    np.testing.assert_allclose(r.outputs["arg4"].reshape(16, 64).astype(np.float32),
                               p.astype(np.float16).astype(np.float32), rtol=1e-3, atol=1e-3)


def test_func_call_helpers_and_entry():
    rng = _rng(8)
    n = 48
    x = rng.standard_normal((n, 32)).astype(np.float32)
    y = rng.standard_normal((n, 32)).astype(np.float32)
    r = _run("k08_call_entry.pto", inputs={"arg0": x, "arg1": y}, args={"arg3": n, "arg4": -1.5})
    assert r.entry == "main"
    np.testing.assert_allclose(r.outputs["arg2"].reshape(n, 32), -1.5 * x + y, rtol=1e-6, atol=1e-6)


def test_tgather_index_form_and_tci():
    rng = _rng(9)
    row = rng.standard_normal(64).astype(np.float32)
    src = rng.standard_normal((8, 32)).astype(np.float32)
    gi = rng.integers(0, 256, (8, 32)).astype(np.int32)
    gi[0, 0], gi[1, 1] = 256, 1000  # out of range -> 0
    r = _run("k09_gather_tci.pto", inputs={"arg0": row, "arg3": src, "arg4": gi}, args={"arg6": -5})
    np.testing.assert_array_equal(r.outputs["arg1"].ravel(), row[::-1])
    np.testing.assert_array_equal(r.outputs["arg2"].ravel(), np.arange(-5, 59, dtype=np.int32))
    flat = src.ravel()
    ref = np.where(gi < 256, flat[np.clip(gi, 0, 255)], 0).astype(np.float32)
    np.testing.assert_array_equal(r.outputs["arg5"].reshape(8, 32), ref)


def test_scf_while_prefix_sum_stops_at_limit():
    rng = _rng(10)
    n = 40
    x = rng.standard_normal((n, 64)).astype(np.float32)
    out0 = np.full((n, 64), 7.0, np.float32)
    r = _run("k10_while_prefix.pto", inputs={"arg0": x, "arg1": out0}, args={"arg2": n, "arg3": 24})
    ref = out0.copy()
    acc = np.zeros((8, 64), np.float32)
    for blk in range(3):
        acc = acc + x[8 * blk:8 * blk + 8]
        ref[8 * blk:8 * blk + 8] = acc
    np.testing.assert_allclose(r.outputs["arg1"].reshape(n, 64), ref, rtol=1e-6, atol=1e-6)


def test_ragged_softmax_set_validshape_tfillpad():
    rng = _rng(11)
    n, c = 37, 45
    x = (rng.standard_normal((n, c)) * 3).astype(np.float32)
    guard = np.full(n * c + 64, 123.0, np.float32)  # output buffer larger than the matrix
    r = _run("k11_ragged_softmax.pto", inputs={"arg0": x, "arg1": guard}, args={"arg2": n, "arg3": c})
    e = np.exp(x - x.max(1, keepdims=True))
    out = r.outputs["arg1"].ravel()
    np.testing.assert_allclose(out[:n * c].reshape(n, c), e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-9)
    assert (out[n * c:] == 123.0).all()  # nothing written past the ragged tail


def test_textract_tinsert_blocked_gemm():
    rng = _rng(12)
    a = rng.standard_normal((32, 32)).astype(np.float16)
    b = rng.standard_normal((32, 32)).astype(np.float16)
    r = _run("k12_extract_insert.pto", inputs={"arg0": a, "arg1": b})
    ref = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(r.outputs["arg2"].reshape(32, 32), ref, rtol=1e-3, atol=1e-5 * 32)


def test_row_and_column_reductions_partial_valid_region():
    rng = _rng(13)
    x = rng.standard_normal((24, 64)).astype(np.float32)
    r = _run("k13_reductions.pto", inputs={"arg0": x})
    o = r.outputs
    np.testing.assert_allclose(o["arg1"].ravel(), x.sum(0), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(o["arg2"].ravel(), x.max(0))
    np.testing.assert_array_equal(o["arg3"].ravel(), x.min(1))
    np.testing.assert_array_equal(o["arg4"].ravel(), x.argmax(1))
    np.testing.assert_array_equal(o["arg5"].ravel(), x.argmax(0))


def test_tcvt_rounding_modes():
    rng = _rng(14)
    x = (rng.standard_normal((16, 32)) * 100).astype(np.float32)
    x[0, :8] = [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.7, -3.7]
    x[1, :4] = [40000.0, -40000.0, 32767.4, -32768.6]
    r = _run("k14_tcvt_rmodes.pto", inputs={"arg0": x})
    o = {k: v.reshape(16, 32) for k, v in r.outputs.items()}

    def sat16(v):
        return np.clip(v, -32768, 32767).astype(np.int16)

    np.testing.assert_array_equal(o["arg1"], sat16(np.trunc(x)))
    np.testing.assert_array_equal(o["arg2"], sat16(np.floor(x)))
    np.testing.assert_array_equal(o["arg3"], sat16(np.sign(x) * np.floor(np.abs(x) + 0.5)))  # ties away
    np.testing.assert_array_equal(o["arg4"], sat16(np.rint(x)))
    np.testing.assert_array_equal(o["arg5"], np.ceil(x).astype(np.int32))
    np.testing.assert_array_equal(o["arg6"], x.astype(np.float16))
    np.testing.assert_allclose(o["arg7"].astype(np.float32), x, rtol=1.6e-2)
    np.testing.assert_array_equal(o["arg8"], np.ceil(x))


def test_double_buffer_level3_dynamic_event_ids():
    rng = _rng(15)
    n = 56
    x = rng.standard_normal((n, 64)).astype(np.float32)
    r = _run("k15_double_buffer_dyn.pto", inputs={"arg0": x}, args={"arg2": n})
    assert r.sync_mode == "asis" and r.findings == []
    np.testing.assert_allclose(r.outputs["arg1"].reshape(n, 64), 2 * x + 1, rtol=1e-6)
