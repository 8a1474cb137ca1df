# error: 10: exp: INT32 tiles are not supported (supported: FP16, FP32)
import pypto.language as pl


@pl.program
class Bad:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 64], pl.INT32], o: pl.Out[pl.Tensor[[16, 64], pl.INT32]]) -> pl.Tensor[[16, 64], pl.INT32]:
        t = pl.load(a, [0, 0], [16, 64])
        u = pl.exp(t)
        return pl.store(u, [0, 0], o)
