"""Symmetric per-row int8 quantisation and dequantisation (the W8A8 pattern): scale = max|x| / 127
per row; q = cast(x / scale, INT8, round half away); xd = q * scale. Outputs q (int8), scale and xd.
Rows in blocks of 8 over pl.parallel."""
import pypto.language as pl

R = 8


@pl.jit
def quant_rows(x: pl.Tensor, q: pl.Out[pl.Tensor], scale: pl.Out[pl.Tensor], xd: pl.Out[pl.Tensor]):
    rows, cols = x.shape
    for i in pl.parallel(rows // R):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="quant_block"):
            t = pl.load(x, [i * R, 0], [R, cols])
            tmp = pl.create_tile([R, cols], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)
            amax = pl.row_max(pl.abs(t), tmp)
            s = pl.muls(pl.maxs(amax, 1e-8), 1.0 / 127.0)
            qf = pl.row_expand_div(t, s)
            qi = pl.cast(pl.cast(qf, pl.FP16), pl.INT8, mode="round")  # a2a3 converts f32 to i8 through f16
            pl.store(qi, [i * R, 0], q)
            pl.store(s, [i * R, 0], scale)
            pl.store(pl.row_expand_mul(pl.cast(pl.cast(qi, pl.FP16), pl.FP32), s), [i * R, 0], xd)
