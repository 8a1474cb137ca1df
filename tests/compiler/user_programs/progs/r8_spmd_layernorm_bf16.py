"""SPMD layer norm of a bf16 [rows, 128] tensor, one block of 8 rows per SPMD block: cast to fp32,
mean and variance by row sums, normalise, scale and shift by fp32 gamma/beta, cast back to bf16."""
import pypto.language as pl

R = 8
EPS = 1e-5


@pl.jit
def layer_norm_bf16(x: pl.Tensor, gamma: pl.Tensor, beta: pl.Tensor, y: pl.Out[pl.Tensor]):
    rows, cols = x.shape
    for i in pl.spmd(rows // R, name_hint="ln_block"):
        t = pl.cast(pl.load(x, [i * R, 0], [R, cols]), pl.FP32)
        tmp = pl.create_tile([R, cols], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)
        mean = pl.muls(pl.row_sum(t, tmp), 1.0 / cols)
        d = pl.row_expand_sub(t, mean)
        var = pl.muls(pl.row_sum(pl.mul(d, d), tmp), 1.0 / cols)
        inv = pl.rsqrt(pl.adds(var, EPS))
        n = pl.row_expand_mul(d, inv)
        g = pl.load(gamma, [0, 0], [1, cols])
        b = pl.load(beta, [0, 0], [1, cols])
        o = pl.add(pl.col_expand_mul(n, g), pl.col_expand(n, b))
        pl.store(pl.cast(o, pl.BF16), [i * R, 0], y)
