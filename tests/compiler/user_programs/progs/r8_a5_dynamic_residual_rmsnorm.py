"""Residual add then RMS norm in bf16 on the A5 target (RunConfig(platform="a5")), the row count a
dynamic dimension (pl.dynamic) so one compiled program serves every M; rows in blocks of 16 through
pl.pipeline(stage=2), the last block ragged (valid_shape). h = x + r is written back to r (InOut),
y = h / sqrt(mean(h^2) + eps) * w. bf16 add is legal on A5 only."""
import pypto.language as pl

M = pl.dynamic("M")
N = 128
B = 16
EPS = 1e-6


@pl.jit
def residual_rms(x: pl.Tensor[[M, N], pl.BF16], r: pl.InOut[pl.Tensor[[M, N], pl.BF16]],
                 w: pl.Tensor[[1, N], pl.FP32], y: pl.Out[pl.Tensor[[M, N], pl.BF16]]):
    m = pl.tensor.dim(x, 0)
    for i in pl.pipeline(0, m, B, stage=2):
        rows = pl.min(B, m - i)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="res_rms"):
            h = pl.add(pl.load(x, [i, 0], [B, N], valid_shape=[rows, N]),
                       pl.load(r, [i, 0], [B, N], valid_shape=[rows, N]))
            pl.store(h, [i, 0], r)
            hf = pl.cast(h, pl.FP32)
            tmp = pl.create_tile([B, N], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)
            ms = pl.muls(pl.row_sum(pl.mul(hf, hf), tmp), 1.0 / N)
            inv = pl.rsqrt(pl.adds(ms, EPS))
            o = pl.col_expand_mul(pl.row_expand_mul(hf, inv), pl.load(w, [0, 0], [1, N]))
            pl.store(pl.cast(o, pl.BF16), [i, 0], y)
