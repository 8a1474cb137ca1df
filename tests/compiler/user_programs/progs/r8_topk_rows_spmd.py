"""Top-8 of every row of a [4, 512] fp32 score matrix, one SPMD block per row (pypto-lib's top-k
chain): sort32 per 32-element block (records value, index), mrgsort block_len=64 then 256 (runs of 4L
columns), keep the first 16 record columns, split values (P0101) and indices (P1010 as INT32)."""
import pypto.language as pl

K = 8


@pl.jit
def topk_rows(x: pl.Tensor, vals: pl.Out[pl.Tensor], idx: pl.Out[pl.Tensor]):
    rows, cols = x.shape
    for r in pl.spmd(rows, name_hint="topk_row"):
        s = pl.sort32(pl.load(x, [r, 0], [1, cols]), pl.arange(0, [1, cols], dtype=pl.UINT32))
        s = pl.mrgsort(s, block_len=64)
        s = pl.mrgsort(s, block_len=256)
        top = pl.slice(s, [1, 2 * K], [0, 0])
        pl.store(pl.gather(top, mask_pattern=pl.MaskPattern.P0101), [r, 0], vals)
        pl.store(pl.gather(top, mask_pattern=pl.MaskPattern.P1010, output_dtype=pl.INT32), [r, 0], idx)
