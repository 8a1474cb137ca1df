"""ConvertToSSA: a name carried through a loop whose body rebinds it to a new variable leaves the loop
mapped as it was before (it restored the mapping of the body's variable instead, so the variable the
name stood for before the loop kept pointing at the loop's iter arg). An Out parameter rebound in a
pl.unroll loop by an inline helper (``kr = rope_kv_update(..., kr, ...)``, pypto-lib's pattern)
then failed verification ("'kr_1' is used before it is defined"); with pl.range the write-back of the
Out parameter named the iter arg outside its loop."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl

D, HALF, NKV, MAXS = 32, 16, 2, 64


@pl.jit.inline
def rope_kv_update(k: pl.Tensor, v: pl.Tensor, cos: pl.Tensor, sin: pl.Tensor, kc: pl.InOut[pl.Tensor],
                   vc: pl.InOut[pl.Tensor], kr: pl.Out[pl.Tensor], pos: pl.Scalar[pl.INDEX], h: pl.Scalar[pl.INDEX]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="rope_k"):
        k1 = pl.load(k, [0, h * D], [1, HALF])
        k2 = pl.load(k, [0, h * D + HALF], [1, HALF])
        c = pl.load(cos, [0, 0], [1, HALF])
        s = pl.load(sin, [0, 0], [1, HALF])
        r1 = pl.sub(pl.mul(k1, c), pl.mul(k2, s))
        r2 = pl.add(pl.mul(k2, c), pl.mul(k1, s))
        pl.store(r1, [0, h * D], kr)
        pl.store(r2, [0, h * D + HALF], kr)
        pl.store(r1, [h * MAXS + pos, 0], kc)
        pl.store(r2, [h * MAXS + pos, HALF], kc)
        pl.store(pl.load(v, [0, h * D], [1, D]), [h * MAXS + pos, 0], vc)
    return kr


@pl.jit
def decode_update_unrolled(k: pl.Tensor, v: pl.Tensor, cos: pl.Tensor, sin: pl.Tensor, kc: pl.InOut[pl.Tensor],
                           vc: pl.InOut[pl.Tensor], kr: pl.Out[pl.Tensor], pos: pl.Scalar[pl.INDEX]):
    for h in pl.unroll(NKV):
        kr = rope_kv_update(k, v, cos, sin, kc, vc, kr, pos, h)


@pl.jit
def decode_update_loop(k: pl.Tensor, v: pl.Tensor, cos: pl.Tensor, sin: pl.Tensor, kc: pl.InOut[pl.Tensor],
                       vc: pl.InOut[pl.Tensor], kr: pl.Out[pl.Tensor], pos: pl.Scalar[pl.INDEX]):
    for h in pl.range(NKV):
        kr = rope_kv_update(k, v, cos, sin, kc, vc, kr, pos, h)


@pytest.mark.parametrize("fn", [decode_update_unrolled, decode_update_loop], ids=["unroll", "range"])
def test_out_parameter_rebound_by_an_inline_helper_in_a_loop(fn):
    rng = np.random.default_rng(1)
    k, v = rng.standard_normal((1, NKV * D)).astype(np.float32), rng.standard_normal((1, NKV * D)).astype(np.float32)
    ang = rng.uniform(0, 3, (1, HALF))
    cos, sin = np.cos(ang).astype(np.float32), np.sin(ang).astype(np.float32)
    pos = 5
    kc, vc, kr = np.zeros((NKV * MAXS, D), np.float32), np.zeros((NKV * MAXS, D), np.float32), np.zeros((1, NKV * D), np.float32)
    fn(k, v, cos, sin, kc, vc, kr, pos)
    for h in range(NKV):
        k1, k2 = k[0, h * D:h * D + HALF], k[0, h * D + HALF:h * D + D]
        want = np.concatenate([k1 * cos[0] - k2 * sin[0], k2 * cos[0] + k1 * sin[0]])
        np.testing.assert_allclose(kr[0, h * D:h * D + D], want, rtol=1e-6)
        np.testing.assert_allclose(kc[h * MAXS + pos], want, rtol=1e-6)
        np.testing.assert_array_equal(vc[h * MAXS + pos], v[0, h * D:h * D + D])
    assert np.count_nonzero(kc.any(1)) == NKV and np.count_nonzero(vc.any(1)) == NKV
