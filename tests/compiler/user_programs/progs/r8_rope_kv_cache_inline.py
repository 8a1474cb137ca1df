"""Rotary embedding and KV-cache append in the shape of pypto-lib's rope_kv_cache_update: an
@pl.jit.inline helper with three Out parameters that returns only one of them (all three must still
reach the caller). For each of `steps` new tokens at position pos0 + t: q' = rope(q), k' = rope(k)
written into k_cache[pos0 + t, :], v written into v_cache[pos0 + t, :]. Half-split rope over
D = 64: rope(x) = x * cos + rotate_half(x) * sin with rotate_half(x) = [-x2, x1]."""
import pypto.language as pl

D = 64
H = 32


@pl.jit.inline
def rope_update(q: pl.Tensor, k: pl.Tensor, v: pl.Tensor, cos: pl.Tensor, sin: pl.Tensor, t: int, pos: int,
                q_out: pl.Out[pl.Tensor], k_cache: pl.Out[pl.Tensor], v_cache: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="rope_kv"):
        c1 = cos[pos:pos + 1, 0:H]
        s1 = sin[pos:pos + 1, 0:H]
        q1 = q[t:t + 1, 0:H]
        q2 = q[t:t + 1, H:D]
        q_out[t:t + 1, 0:H] = pl.sub(pl.mul(q1, c1), pl.mul(q2, s1))
        q_out[t:t + 1, H:D] = pl.add(pl.mul(q2, c1), pl.mul(q1, s1))
        k1 = k[t:t + 1, 0:H]
        k2 = k[t:t + 1, H:D]
        k_cache[pos:pos + 1, 0:H] = pl.sub(pl.mul(k1, c1), pl.mul(k2, s1))
        k_cache[pos:pos + 1, H:D] = pl.add(pl.mul(k2, c1), pl.mul(k1, s1))
        v_cache[pos:pos + 1, :] = v[t:t + 1, :]
    return q_out


@pl.jit
def decode_steps(q: pl.Tensor, k: pl.Tensor, v: pl.Tensor, cos: pl.Tensor, sin: pl.Tensor,
                 q_out: pl.Out[pl.Tensor], k_cache: pl.InOut[pl.Tensor], v_cache: pl.InOut[pl.Tensor],
                 pos0: int):
    steps = q.shape[0]
    for t in pl.range(steps):
        q_out = rope_update(q, k, v, cos, sin, t, pos0 + t, q_out, k_cache, v_cache)
