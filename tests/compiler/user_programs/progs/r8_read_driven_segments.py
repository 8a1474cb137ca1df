"""Segment sums driven by host reads (paged-attention style offsets): `offsets` holds n+1 row
boundaries; for each segment the host reads its start and length with pl.read, and a region sums its
rows (a run-time loop inside the region over 8-row tiles, the last tile ragged) into out[seg, :].
A pl.write records the number of segments processed in `count[0, 0]`."""
import pypto.language as pl

T = 8


@pl.jit
def segment_sums(x: pl.Tensor, offsets: pl.Tensor, out: pl.Out[pl.Tensor], count: pl.Out[pl.Tensor]):
    nseg = offsets.shape[1] - 1
    cols = x.shape[1]
    for s in pl.range(nseg):
        lo = pl.cast(pl.read(offsets, [0, s]), pl.INDEX)
        hi = pl.cast(pl.read(offsets, [0, s + 1]), pl.INDEX)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="segment_sum"):
            acc = pl.full([1, cols], dtype=pl.FP32, value=0.0)
            for r in pl.range(lo, hi, T):
                n = pl.min(T, hi - r)
                t = pl.load(x, [r, 0], [T, cols], valid_shape=[n, cols])
                t = pl.fillpad(t, pad_value=pl.PadValue.zero)
                acc = pl.add(acc, pl.sum(t, axis=0))
            pl.store(acc, [s, 0], out)
    pl.write(count, [0, 0], nseg)
