"""GELU (tanh form, tanh through exp) over an n x 96 fp32 tensor with a ragged last row block: orchestration slices
x[r:r+16, :] (a view), the region computes with tensor ops and writes y[r:r+rows, :] back by slice
assignment; the last block is shorter (pl.min on the row count)."""
import pypto.language as pl

B = 16
C0 = 0.7978845608028654  # sqrt(2/pi)


@pl.jit
def gelu_rows(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    n, c = x.shape
    for r in pl.range(0, n, B):
        rows = pl.min(B, n - r)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="gelu_block"):
            t = pl.slice(x, [B, c], [r, 0], valid_shape=[rows, c])
            t3 = pl.mul(pl.mul(t, t), t)
            inner = pl.muls(pl.add(t, pl.muls(t3, 0.044715)), C0)
            th = pl.sub(pl.full([B, c], dtype=pl.FP32, value=1.0), pl.muls(pl.recip(pl.adds(pl.exp(pl.muls(inner, 2.0)), 1.0)), 2.0))
            g = pl.muls(pl.mul(t, pl.adds(th, 1.0)), 0.5)
            pl.assemble(y, g, [r, 0])
