# error: 11: 'u' is assigned twice (strict_ssa=True)
import pypto.language as pl


@pl.program
class Bad:
    @pl.function(type=pl.FunctionType.InCore, strict_ssa=True)
    def k(self, a: pl.Tensor[[16, 16], pl.FP32], o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        t = pl.load(a, [0, 0], [16, 16])
        u = pl.add(t, t)
        u = pl.mul(u, t)
        return pl.store(u, [0, 0], o)
