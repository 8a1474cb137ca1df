"""Fourth red-team round: programs written the way pypto-lib examples and model kernels are, each
checked against NumPy: a transformer block (rms_norm -> q/k/v -> rope -> causal attention -> o-proj ->
SwiGLU MLP) at ragged sizes, a batched paged-KV decode step (2-D block table and lengths read with
pl.read), MoE top-2 routing chosen on the host with a scatter-add by atomic assemble, layer_norm
backward (reductions over rows and over features), int8 quantize/dequantize, cumulative sums and
maxima written as loops, one kernel called with several shapes and dtypes (the cache), pl.spmd over
a block count that does not divide the rows, pl.pipeline in a kernel and over tasks, a manual-scope
diamond, pl.split_aiv NONE guarded by the lane id, and the seed's @pl.program kernels beside their
@pl.jit twins in one run. Torch tensors (bf16, non-contiguous views written in place) where installed.
"""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.runtime import run

RNG = np.random.default_rng


# ----------------------------------------------------------------------------- transformer block
T, HID, NH, HD, FF = 13, 48, 2, 24, 40
HALF = HD // 2
EPS = 1e-6


@pl.jit
def transformer_block(x: pl.Tensor, wn: pl.Tensor, wq: pl.Tensor, wk: pl.Tensor, wv: pl.Tensor, wo: pl.Tensor,
                      cos: pl.Tensor, sin: pl.Tensor, mask: pl.Tensor, wg: pl.Tensor, wu: pl.Tensor, wd: pl.Tensor,
                      wn2: pl.Tensor, y: pl.Out[pl.Tensor]):
    q = pl.create_tensor([T, HID], dtype=pl.FP32)
    k = pl.create_tensor([T, HID], dtype=pl.FP32)
    v = pl.create_tensor([T, HID], dtype=pl.FP32)
    attn = pl.create_tensor([T, HID], dtype=pl.FP32)
    h1 = pl.create_tensor([T, HID], dtype=pl.FP32)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="qkv"):
        xn = pl.rms_norm(x, wn, eps=EPS)
        q[:, :] = pl.matmul(xn, wq)
        k[:, :] = pl.matmul(xn, wk)
        v[:, :] = pl.matmul(xn, wv)
    for h in pl.range(NH):
        c0 = h * HD
        q1 = q[:, c0:c0 + HALF]
        q2 = q[:, c0 + HALF:c0 + HD]
        k1 = k[:, c0:c0 + HALF]
        k2 = k[:, c0 + HALF:c0 + HD]
        vh = v[:, c0:c0 + HD]
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="head"):
            qr1 = pl.sub(pl.mul(q1, cos), pl.mul(q2, sin))
            qr2 = pl.add(pl.mul(q2, cos), pl.mul(q1, sin))
            kr1 = pl.sub(pl.mul(k1, cos), pl.mul(k2, sin))
            kr2 = pl.add(pl.mul(k2, cos), pl.mul(k1, sin))
            s = pl.add(pl.matmul(qr1, kr1, b_trans=True), pl.matmul(qr2, kr2, b_trans=True))
            p = pl.softmax(pl.add(pl.mul(s, 1.0 / HD ** 0.5), mask))
            attn[:, c0:c0 + HD] = pl.matmul(p, vh)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="oproj"):
        h1[:, :] = pl.add(x, pl.matmul(attn, wo))
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="mlp"):
        hn = pl.rms_norm(h1, wn2, eps=EPS)
        y[:, :] = pl.add(h1, pl.matmul(pl.swiglu(pl.matmul(hn, wg), pl.matmul(hn, wu)), wd))


def _transformer_ref(x, wn, wq, wk, wv, wo, cos, sin, mask, wg, wu, wd, wn2):
    def rms(a, w):
        return a / np.sqrt((a * a).mean(-1, keepdims=True) + EPS) * w

    x = x.astype(np.float64)
    xn = rms(x, wn)
    q, k, v = xn @ wq, xn @ wk, xn @ wv
    out = np.zeros((T, HID))
    for h in range(NH):
        c0 = h * HD

        def rope(a, c0=c0):
            a1, a2 = a[:, c0:c0 + HALF], a[:, c0 + HALF:c0 + HD]
            return np.concatenate([a1 * cos - a2 * sin, a2 * cos + a1 * sin], 1)

        s = rope(q) @ rope(k).T / HD ** 0.5 + mask
        p = np.exp(s - s.max(-1, keepdims=True))
        out[:, c0:c0 + HD] = (p / p.sum(-1, keepdims=True)) @ v[:, c0:c0 + HD]
    h1 = x + out @ wo
    hn = rms(h1, wn2)
    g, u = hn @ wg, hn @ wu
    return h1 + (g / (1 + np.exp(-g)) * u) @ wd


def test_transformer_block_with_rope_and_causal_mask():
    rng = RNG(0)

    def f(*s):
        return (rng.standard_normal(s) * 0.3).astype(np.float32)

    ang = np.arange(T)[:, None] / (10000 ** (np.arange(HALF)[None, :] / HALF))
    args = (f(T, HID), 1 + f(HID), f(HID, HID), f(HID, HID), f(HID, HID), f(HID, HID),
            np.cos(ang).astype(np.float32), np.sin(ang).astype(np.float32),
            np.triu(np.full((T, T), -1e9, np.float32), 1), f(HID, FF), f(HID, FF), f(FF, HID), 1 + f(HID))
    y = np.full((T, HID), np.nan, np.float32)
    transformer_block(*args, y)
    np.testing.assert_allclose(y, _transformer_ref(*args), rtol=1e-4, atol=1e-4)


# ----------------------------------------------------------------------------- paged decode, batched
B, DH, PAGE, MAXB, QH = 3, 32, 16, 4, 16


@pl.jit
def paged_decode(q: pl.Tensor, kc: pl.Tensor, vc: pl.Tensor, table: pl.Tensor, lens: pl.Tensor, o: pl.Out[pl.Tensor]):
    m = pl.create_tensor([QH, 1], dtype=pl.FP32)
    l = pl.create_tensor([QH, 1], dtype=pl.FP32)
    a = pl.create_tensor([QH, 1], dtype=pl.FP32)
    acc = pl.create_tensor([QH, DH], dtype=pl.FP32)
    s_buf = pl.create_tensor([QH, PAGE], dtype=pl.FP32)
    p_buf = pl.create_tensor([QH, PAGE], dtype=pl.FP16)
    pv = pl.create_tensor([QH, DH], dtype=pl.FP32)
    for b in pl.range(B):
        ctx = pl.cast(pl.read(lens, [b]), pl.INDEX)
        qb = q[b * QH:(b + 1) * QH, :]
        ob = o[b * QH:(b + 1) * QH, :]
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="init"):
            m[:, :] = pl.full([QH, 1], dtype=pl.FP32, value=-1e30)
            l[:, :] = pl.full([QH, 1], dtype=pl.FP32, value=0.0)
            acc[:, :] = pl.full([QH, DH], dtype=pl.FP32, value=0.0)
        for j in pl.range((ctx + PAGE - 1) // PAGE):
            page = pl.cast(pl.read(table, [b, j]), pl.INDEX)
            valid = pl.min(ctx - j * PAGE, PAGE)
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="scores"):
                qm = pl.load(qb, [0, 0], [QH, DH], target_memory=pl.Mem.Mat)
                km = pl.load(kc, [page * PAGE, 0], [PAGE, DH], target_memory=pl.Mem.Mat)
                s_buf[:, :] = pl.matmul(pl.move(qm, target_memory=pl.Mem.Left),
                                        pl.move(pl.tile.transpose_view(km), target_memory=pl.Mem.Right))
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="softmax_step"):
                raw = pl.load(s_buf, [0, 0], [QH, PAGE], valid_shape=[QH, valid])
                s = pl.muls(pl.fillpad(raw, pad_value=pl.PadValue.min), 1.0 / DH ** 0.5)
                tmp = pl.create_tile([QH, PAGE], dtype=pl.FP32, target_memory=pl.Mem.Vec)
                m_old = m[:, :]
                m_new = pl.maximum(m_old, pl.row_max(s, tmp))
                p = pl.exp(pl.row_expand_sub(s, m_new))
                alpha = pl.exp(pl.sub(m_old, m_new))
                l[:, :] = pl.add(pl.mul(l[:, :], alpha), pl.row_sum(p, tmp))
                m[:, :] = m_new
                a[:, :] = alpha
                p_buf[:, :] = pl.cast(p, pl.FP16)
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="values"):
                pm = pl.load(p_buf, [0, 0], [QH, PAGE], target_memory=pl.Mem.Mat)
                vm = pl.load(vc, [page * PAGE, 0], [PAGE, DH], target_memory=pl.Mem.Mat)
                pv[:, :] = pl.matmul(pl.move(pm, target_memory=pl.Mem.Left), pl.move(vm, target_memory=pl.Mem.Right))
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="accum"):
                acc[:, :] = pl.add(pl.row_expand_mul(acc[:, :], a[:, :]), pv[:, :])
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="norm"):
            ob[:, :] = pl.row_expand_div(acc[:, :], l[:, :])


def test_batched_paged_decode_with_a_one_token_context():
    rng = RNG(5)
    q = rng.standard_normal((B * QH, DH)).astype(np.float16)
    kc = rng.standard_normal((12 * PAGE, DH)).astype(np.float16)
    vc = rng.standard_normal((12 * PAGE, DH)).astype(np.float16)
    table = rng.permutation(12).reshape(B, MAXB).astype(np.int32)
    lens = np.array([37, 1, 64], np.int32)
    o = np.full((B * QH, DH), np.nan, np.float32)
    paged_decode(q, kc, vc, table, lens, o)
    for b in range(B):
        n = int(lens[b])
        rows = np.concatenate([np.arange(p * PAGE, p * PAGE + PAGE) for p in table[b, :-(-n // PAGE)]])[:n]
        s = q[b * QH:(b + 1) * QH].astype(np.float64) @ kc[rows].astype(np.float64).T / np.sqrt(DH)
        p = np.exp(s - s.max(1, keepdims=True))
        want = (p / p.sum(1, keepdims=True)) @ vc[rows].astype(np.float64)
        np.testing.assert_allclose(o[b * QH:(b + 1) * QH], want, rtol=2e-3, atol=2e-3)


# ----------------------------------------------------------------------------- MoE top-2
MT, MH, ME, MF = 6, 32, 4, 16


@pl.jit
def moe_top2(x: pl.Tensor, wr: pl.Tensor, w1: pl.Tensor, w2: pl.Tensor, probs: pl.Out[pl.Tensor],
             y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="router"):
        probs[:, :] = pl.softmax(pl.matmul(x, wr))
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="zero"):
        y[:, :] = pl.full([MT, MH], dtype=pl.FP32, value=0.0)
    for t in pl.range(MT):
        e1 = 0
        best = pl.read(probs, [t, 0])
        for e in pl.range(1, ME):
            pe = pl.read(probs, [t, e])
            if pe > best:
                best = pe
                e1 = e
        e2 = 0
        second = -1.0
        for e in pl.range(ME):
            pe = pl.read(probs, [t, e])
            if e != e1:  # noqa: SIM102  (nested, as users write it)
                if pe > second:
                    second = pe
                    e2 = e
        xt = x[t:t + 1, :]
        for k in pl.range(2):
            ek = e1
            gk = best
            if k == 1:
                ek = e2
                gk = second
            w1e = w1[ek * MH:(ek + 1) * MH, :]
            w2e = w2[ek * MF:(ek + 1) * MF, :]
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="expert"):
                hdn = pl.relu(pl.matmul(xt, w1e))
                pl.assemble(y, pl.mul(pl.matmul(hdn, w2e), gk), [t, 0], atomic=pl.AtomicType.Add)


def test_moe_top2_routing_and_scatter_add():
    rng = RNG(3)
    x = rng.standard_normal((MT, MH)).astype(np.float32)
    wr = rng.standard_normal((MH, ME)).astype(np.float32)
    w1 = (rng.standard_normal((ME * MH, MF)) * 0.2).astype(np.float32)
    w2 = (rng.standard_normal((ME * MF, MH)) * 0.2).astype(np.float32)
    probs, y = np.zeros((MT, ME), np.float32), np.full((MT, MH), np.nan, np.float32)
    moe_top2(x, wr, w1, w2, probs, y)
    lg = x.astype(np.float64) @ wr
    p = np.exp(lg - lg.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    np.testing.assert_allclose(probs, p, rtol=1e-5, atol=1e-6)
    want = np.zeros((MT, MH))
    for t in range(MT):
        for e in np.argsort(-p[t], kind="stable")[:2]:
            want[t] += p[t, e] * (np.maximum(x[t] @ w1[e * MH:(e + 1) * MH], 0) @ w2[e * MF:(e + 1) * MF])
    np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-5)


# ----------------------------------------------------------------------------- layer_norm backward
LR, LC = 19, 72


@pl.jit
def layer_norm_backward(x: pl.Tensor, dy: pl.Tensor, w: pl.Tensor, dx: pl.Out[pl.Tensor], dw: pl.Out[pl.Tensor],
                        db: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="ln_bwd"):
        xc = pl.sub(x, pl.mean(x, axis=-1, keepdim=True))
        rstd = pl.rsqrt(pl.add(pl.mean(pl.mul(xc, xc), axis=-1, keepdim=True), 1e-5))
        xhat = pl.mul(xc, rstd)
        g = pl.mul(dy, w)
        s1 = pl.sum(g, axis=-1, keepdim=True)
        s2 = pl.sum(pl.mul(g, xhat), axis=-1, keepdim=True)
        dx[:, :] = pl.mul(pl.mul(pl.sub(pl.sub(pl.mul(g, float(LC)), s1), pl.mul(xhat, s2)), rstd), 1.0 / LC)
        dw[:, :] = pl.sum(pl.mul(dy, xhat), axis=0, keepdim=True)
        db[:, :] = pl.sum(dy, axis=0, keepdim=True)


def test_layer_norm_backward_reduces_over_rows_and_features():
    rng = RNG(7)
    x, dy = rng.standard_normal((LR, LC)).astype(np.float32), rng.standard_normal((LR, LC)).astype(np.float32)
    w = rng.standard_normal((1, LC)).astype(np.float32)
    dx, dw, db = np.zeros((LR, LC), np.float32), np.zeros((1, LC), np.float32), np.zeros((1, LC), np.float32)
    layer_norm_backward(x, dy, w, dx, dw, db)
    xd = x.astype(np.float64)
    mu = xd.mean(1, keepdims=True)
    rstd = 1 / np.sqrt(((xd - mu) ** 2).mean(1, keepdims=True) + 1e-5)
    xhat, g = (xd - mu) * rstd, dy * w
    want = (LC * g - g.sum(1, keepdims=True) - xhat * (g * xhat).sum(1, keepdims=True)) * rstd / LC
    np.testing.assert_allclose(dx, want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(dw, (dy * xhat).sum(0, keepdims=True), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(db, dy.sum(0, keepdims=True), rtol=1e-5, atol=1e-5)


# ----------------------------------------------------------------------------- int8 quantization


@pl.jit
def quantize_int8(x: pl.Tensor, q: pl.Out[pl.Tensor], scale: pl.Out[pl.Tensor], deq: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="quant"):
        s = pl.mul(pl.maximum(pl.max(pl.abs(x), axis=-1, keepdim=True), 1e-8), 1.0 / 127.0)
        scale[:, :] = s
        q[:, :] = pl.cast(pl.div(x, s), pl.INT8, mode="rint")
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="dequant"):
        deq[:, :] = pl.mul(pl.cast(q, pl.FP32), scale)


def test_int8_quantize_dequantize_per_row():
    x = (RNG(9).standard_normal((21, 96)) * 3).astype(np.float32)
    x[4] = 0.0
    q, sc, dq = np.zeros((21, 96), np.int8), np.zeros((21, 1), np.float32), np.zeros((21, 96), np.float32)
    quantize_int8(x, q, sc, dq)
    s = np.maximum(np.abs(x).max(1, keepdims=True), np.float32(1e-8)) * np.float32(1 / 127)
    np.testing.assert_allclose(sc, s, rtol=1e-6)
    np.testing.assert_array_equal(q, np.clip(np.rint(x / s), -128, 127).astype(np.int8))
    np.testing.assert_allclose(dq, q.astype(np.float32) * sc, rtol=1e-6)


# ----------------------------------------------------------------------------- cumulative ops as loops
CR, CC, CW = 16, 40, 8


@pl.jit
def cumulative_columns(x: pl.Tensor, cs: pl.Out[pl.Tensor], cm: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="cum"):
        acc = pl.full([CR, 1], dtype=pl.FP32, value=0.0)
        run_max = pl.full([CR, 1], dtype=pl.FP32, value=-3.0e38)
        for c in pl.range(CC):
            col = x[:, c:c + 1]
            acc = pl.add(acc, col)
            run_max = pl.maximum(run_max, col)
            cs[:, c:c + 1] = acc
            cm[:, c:c + 1] = run_max


@pl.jit
def cumulative_rows(x: pl.Tensor, cs: pl.Out[pl.Tensor]):
    rows, cols = x.shape
    carry = pl.create_tensor([1, cols], dtype=pl.FP32)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="zero"):
        carry[:, :] = pl.full([1, cols], dtype=pl.FP32, value=0.0)
    for b in pl.range(0, rows, CW):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="block"):
            total = carry[:, :]
            for r in pl.range(CW):
                total = pl.add(total, x[b + r:b + r + 1, :])
                cs[b + r:b + r + 1, :] = total
            carry[:, :] = total


def test_cumulative_sum_and_max_written_as_loops():
    rng = RNG(4)
    x = rng.standard_normal((CR, CC)).astype(np.float32)
    cs, cm = np.zeros_like(x), np.zeros_like(x)
    cumulative_columns(x, cs, cm)
    np.testing.assert_allclose(cs, np.cumsum(x, 1), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(cm, np.maximum.accumulate(x, 1))
    y = rng.standard_normal((40, 24)).astype(np.float32)
    cy = np.zeros_like(y)
    cumulative_rows(y, cy)
    np.testing.assert_allclose(cy, np.cumsum(y, 0), rtol=1e-5, atol=1e-5)


# ----------------------------------------------------------------------------- one kernel, many shapes


@pl.jit
def gelu_bias(x: pl.Tensor, b: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="gelu_bias"):
        y[:, :] = pl.gelu(pl.add(x, b))


def test_one_kernel_called_with_several_shapes_compiles_each_once():
    rng = RNG(2)
    for r, c in [(7, 33), (64, 128), (7, 33), (1, 5), (64, 128)]:
        for dt, tol in ((np.float32, 5e-5), (np.float16, 1e-2)):
            x, b = rng.standard_normal((r, c)).astype(dt), rng.standard_normal((1, c)).astype(dt)
            y = np.zeros_like(x)
            gelu_bias(x, b, y)
            z = x.astype(np.float64) + b
            want = 0.5 * z * (1 + np.tanh(np.sqrt(2 / np.pi) * (z + 0.044715 * z ** 3)))
            np.testing.assert_allclose(y.astype(np.float64), want, rtol=tol, atol=tol)
    assert len(gelu_bias._cache) == 6  # 3 shapes x 2 dtypes
    args = [np.zeros(s, np.float32) for s in ((7, 33), (1, 33), (7, 33))]
    assert gelu_bias.compile(*args) is gelu_bias.compile(*[a + 1 for a in args])


# ----------------------------------------------------------------------------- torch tensors


@pl.jit
def rms_rows(x: pl.Tensor, w: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="rms"):
        y[:, :] = pl.rms_norm(x, w, eps=1e-6)


@pl.jit
def axpy(x: pl.Tensor, y: pl.InOut[pl.Tensor], a: float):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="axpy"):
        y[:, :] = pl.add(pl.mul(x, a), y)


def test_torch_outputs_written_in_place_bf16_and_strided_views():
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    x, w, y = torch.randn(13, 96), torch.randn(96) + 1, torch.zeros(13, 96)
    ptr = y.data_ptr()
    rms_rows(x, w, y)
    assert y.data_ptr() == ptr
    torch.testing.assert_close(y, torch.nn.functional.rms_norm(x, (96,), w, eps=1e-6), rtol=1e-5, atol=1e-5)
    xb, wb, yb = torch.randn(9, 64).bfloat16(), (torch.randn(64) + 1).bfloat16(), torch.zeros(9, 64, dtype=torch.bfloat16)
    rms_rows(xb, wb, yb)
    torch.testing.assert_close(yb.float(), torch.nn.functional.rms_norm(xb.float(), (64,), wb.float(), eps=1e-6),
                               rtol=2e-2, atol=2e-2)
    big = torch.randn(16, 48)
    orig = big.clone()
    xx = torch.randn(16, 32)
    axpy(xx, big[:, 8:40], 2.0)  # a column window: not contiguous
    torch.testing.assert_close(big[:, 8:40], orig[:, 8:40] + 2.0 * xx)
    torch.testing.assert_close(big[:, :8], orig[:, :8])
    torch.testing.assert_close(big[:, 40:], orig[:, 40:])
    t = torch.randn(32, 16)
    orig = t.clone()
    axpy(xx, t.T, -1.0)  # a transposed view
    torch.testing.assert_close(t.T, orig.T - xx)


# ----------------------------------------------------------------------------- SPMD, pipelines, task graphs
TR = 8


@pl.jit
def softmax_spmd(x: pl.Tensor, y: pl.Out[pl.Tensor], nblk: int):
    rows, cols = x.shape
    per = (rows + nblk - 1) // nblk
    for b in pl.spmd(nblk, name_hint="softmax_blocks"):
        start = b * per
        end = pl.min(start + per, rows)
        for t in pl.range((per + TR - 1) // TR):
            r0 = start + t * TR
            if r0 < end:
                v = pl.load(x, [r0, 0], [TR, cols], valid_shape=[pl.min(end - r0, TR), cols])
                tmp = pl.create_tile([TR, cols], dtype=pl.FP32, target_memory=pl.Mem.Vec)
                e = pl.exp(pl.row_expand_sub(v, pl.row_max(v, tmp)))
                pl.store(pl.row_expand_div(e, pl.row_sum(e, tmp)), [r0, 0], y)


@pytest.mark.parametrize("rows,nblk", [(50, 7), (5, 8)])
def test_spmd_blocks_not_dividing_the_rows(rows, nblk):
    x = RNG(rows).standard_normal((rows, 40)).astype(np.float32)
    y = np.full_like(x, np.nan)
    softmax_spmd(x, y, nblk)
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-6)


@pl.jit
def scale_rows_pipelined(x: pl.Tensor, s: pl.Tensor, y: pl.Out[pl.Tensor]):
    rows, cols = x.shape
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="stream"):
        for r in pl.pipeline(0, rows, 16, stage=3):
            t = pl.load(x, [r, 0], [16, cols])
            pl.store(pl.row_expand_mul(pl.exp(t), pl.load(s, [r, 0], [16, 1])), [r, 0], y)


@pl.jit
def sum_squares_pipelined(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    rows, cols = x.shape
    acc = pl.create_tensor([16, cols], dtype=pl.FP32)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="zero"):
        acc[:, :] = pl.full([16, cols], dtype=pl.FP32, value=0.0)
    for r in pl.pipeline(0, rows, 16, stage=2):
        xv = x[r:r + 16, :]
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="acc"):
            acc[:, :] = pl.add(acc, pl.mul(xv, xv))
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="out"):
        y[:, :] = pl.sqrt(acc)


@pytest.mark.parametrize("rows", [16, 112])
def test_pipeline_stages_in_a_kernel_and_over_tasks(rows):
    rng = RNG(rows)
    x, s = rng.standard_normal((rows, 64)).astype(np.float32), rng.standard_normal((rows, 1)).astype(np.float32)
    y = np.zeros_like(x)
    scale_rows_pipelined(x, s, y)
    np.testing.assert_allclose(y, np.exp(x) * s, rtol=1e-5, atol=1e-6)
    y2 = np.zeros((16, 64), np.float32)
    sum_squares_pipelined(x, y2)
    np.testing.assert_allclose(y2, np.sqrt((x.reshape(-1, 16, 64) ** 2).sum(0)), rtol=1e-5)


@pl.jit
def diamond(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    a = pl.create_tensor([16, 32], dtype=pl.FP32)
    b = pl.create_tensor([16, 32], dtype=pl.FP32)
    c = pl.create_tensor([16, 32], dtype=pl.FP32)
    with pl.manual_scope():
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="ta") as ta:
            a[:, :] = pl.exp(x)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="tc", deps=[ta]) as tc:
            c[:, :] = pl.mul(a, 3.0)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="tb", deps=[ta]) as tb:
            b[:, :] = pl.add(a, 1.0)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="td", deps=[tb, tc]):
            y[:, :] = pl.sub(b, c)


def test_manual_scope_diamond():
    x = RNG(12).standard_normal((16, 32)).astype(np.float32)
    y = np.zeros_like(x)
    diamond(x, y)
    np.testing.assert_allclose(y, (np.exp(x) + 1) - 3 * np.exp(x), rtol=1e-5, atol=1e-5)


@pl.jit
def relu_by_lanes_with_lane0_stats(x: pl.Tensor, y: pl.Out[pl.Tensor], tot: pl.Out[pl.Tensor]):
    rows, cols = x.shape
    half = rows // 2
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="lanes"):
        for aiv_id in pl.split_aiv(2, mode=pl.SplitMode.NONE):
            r = aiv_id * half
            pl.store(pl.relu(pl.load(x, [r, 0], [half, cols])), [r, 0], y)
            if aiv_id == 0:
                tmp = pl.create_tile([rows, cols], dtype=pl.FP32, target_memory=pl.Mem.Vec)
                pl.store(pl.row_sum(pl.load(x, [0, 0], [rows, cols]), tmp), [0, 0], tot)


def test_split_aiv_none_with_a_lane_guard():
    x = RNG(13).standard_normal((32, 64)).astype(np.float32)
    y, tot = np.zeros_like(x), np.zeros((32, 1), np.float32)
    relu_by_lanes_with_lane0_stats(x, y, tot)
    np.testing.assert_array_equal(y, np.maximum(x, 0))
    np.testing.assert_allclose(tot, x.sum(1, keepdims=True), rtol=1e-5, atol=1e-5)


# ----------------------------------------------------------------------------- both generations


@pl.program
class MulKernel:  # seed 000, verbatim
    @pl.function
    def mul_kernel_2d(self,
                      a: pl.Tensor[[32, 32], pl.FP32],
                      b: pl.Tensor[[32, 32], pl.FP32],
                      c: pl.Tensor[[32, 32], pl.FP32]):
        tile_a = pl.load(a, [0, 0], [32, 32])
        tile_b = pl.load(b, [0, 0], [32, 32])
        tile_c = pl.mul(tile_a, tile_b)
        pl.store(tile_c, [0, 0], [32, 32], c)


@pl.program
class MyKernel:  # seed 000, verbatim: stores into its input
    @pl.function
    def vector_add(self,
                   a: pl.Tensor[[32, 32], pl.FP32],
                   b: pl.Tensor[[32, 32], pl.FP32]):
        tile_a = pl.load(a, [0, 0], [32, 32])
        tile_b = pl.load(b, [0, 0], [32, 32])
        tile_c = pl.add(tile_a, tile_b)
        pl.store(tile_c, [0, 0], [32, 32], a)


@pl.jit
def mul_jit(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="mul_kernel_2d"):
        c[:, :] = pl.mul(a, b)


@pl.jit.incore
def add_kernel(a: pl.InOut[pl.Tensor], b: pl.Tensor):
    a = pl.store(pl.add(pl.load(a, [0, 0], [32, 32]), pl.load(b, [0, 0], [32, 32])), [0, 0], a)
    return a


@pl.jit
def add_jit(a: pl.InOut[pl.Tensor], b: pl.Tensor):
    add_kernel(a, b)


def test_seed_programs_and_their_jit_twins_in_one_run():
    rng = RNG(14)
    a, b = rng.standard_normal((32, 32)).astype(np.float32), rng.standard_normal((32, 32)).astype(np.float32)
    c1, c2, a1, a2 = np.zeros_like(a), np.zeros_like(a), a.copy(), a.copy()
    run(MulKernel, a, b, c1)
    mul_jit(a, b, c2)
    run(MyKernel, a1, b)
    add_jit(a2, b)
    np.testing.assert_array_equal(c1, a * b)
    np.testing.assert_array_equal(c2, a * b)
    np.testing.assert_array_equal(a1, a + b)
    np.testing.assert_array_equal(a2, a + b)
