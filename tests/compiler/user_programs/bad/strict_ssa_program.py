# error: 10: 't' is assigned twice (strict_ssa=True)
import pypto.language as pl


@pl.program(strict_ssa=True)
class Bad:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 16], pl.FP32], o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        t = pl.load(a, [0, 0], [16, 16])
        t = pl.add(t, t)
        return pl.store(t, [0, 0], o)
