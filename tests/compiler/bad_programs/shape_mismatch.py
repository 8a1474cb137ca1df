# error: 11: shapes [16, 32] and [16, 16] cannot be broadcast
import pypto.language as pl


@pl.program
class Bad:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 32], pl.FP32], o: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        t = pl.load(a, [0, 0], [16, 32])
        s = pl.load(a, [0, 0], [16, 16])
        u = pl.add(t, s)
        return pl.store(u, [0, 0], o)
