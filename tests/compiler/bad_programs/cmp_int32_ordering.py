# error: 11: cmp: the A2/A3 vector unit compares INT32 tiles only for EQ
import pypto.language as pl


@pl.program
class Bad:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 64], pl.INT32], o: pl.Out[pl.Tensor[[16, 64], pl.INT32]]) -> pl.Tensor[[16, 64], pl.INT32]:
        t = pl.load(a, [0, 0], [16, 64])
        u = pl.load(a, [0, 0], [16, 64])
        m = pl.cmp(t, u, cmp_type=2)
        return pl.store(pl.sel(m, t, u), [0, 0], o)
