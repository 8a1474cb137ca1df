"""Halve a row until its first element drops below 1, counting the steps: a pl.while_ inside a region
whose condition reads a carried scalar (the first element, re-read with pl.tile.read at the end of each
trip), with the step count and the tile carried too."""
import pypto.language as pl


@pl.jit
def halve_below_one(x: pl.Tensor, y: pl.Out[pl.Tensor], steps: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="halve"):
        t = pl.load(x, [0, 0], [1, 16])
        first = pl.tile.read(t, [0, 0])
        for (k, v, f) in pl.while_(init_values=(0, t, first)):
            pl.cond(f >= 1.0)
            v2 = pl.muls(v, 0.5)
            f2 = pl.tile.read(v2, [0, 0])
            k_out, v_out, _f_out = pl.yield_(k + 1, v2, f2)
        pl.store(v_out, [0, 0], y)
        pl.write(steps, [0, 0], pl.cast(k_out, pl.INT32))


@pl.jit
def halve_cond_reads_tile(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="halve_bad"):
        t = pl.load(x, [0, 0], [1, 16])
        for (k, v) in pl.while_(init_values=(0, t)):
            pl.cond(pl.tile.read(v, [0, 0]) >= 1.0)
            _k_out, v_out = pl.yield_(k + 1, pl.muls(v, 0.5))
        pl.store(v_out, [0, 0], y)
