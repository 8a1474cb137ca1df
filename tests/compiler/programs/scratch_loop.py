"""Ops that need compiler-made scratch tiles (sel, sels, rem, transpose) inside a loop over row blocks."""

import pypto.language as pl

ROWS, COLS, BLK = 64, 32, 16


@pl.program
class ScratchLoop:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(
        self,
        a: pl.Tensor[[ROWS, COLS], pl.FP32],
        b: pl.Tensor[[ROWS, COLS], pl.FP32],
        o: pl.Out[pl.Tensor[[COLS, ROWS], pl.FP32]],
    ) -> pl.Tensor[[COLS, ROWS], pl.FP32]:
        for i in pl.range(0, ROWS, BLK):
            ta = pl.load(a, [i, 0], [BLK, COLS])
            tb = pl.load(b, [i, 0], [BLK, COLS])
            big = pl.sel(pl.cmp(ta, tb, cmp_type=pl.CmpType.GT), ta, tb)  # maximum(a, b)
            pos = pl.sels(pl.cmps(big, 0.0, cmp_type=pl.CmpType.GE), big, -1.0)
            q = pl.rem(pos, tb)
            t = pl.transpose(q, 0, 1)
            o_done = pl.store(t, [0, i], o)
        return o_done
