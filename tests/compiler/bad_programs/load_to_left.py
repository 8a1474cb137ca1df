# error: 9: load: target_memory must be Vec or Mat, got Left
import pypto.language as pl


@pl.program
class Bad:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 16], pl.FP16], o: pl.Out[pl.Tensor[[16, 16], pl.FP16]]) -> pl.Tensor[[16, 16], pl.FP16]:
        t = pl.load(a, [0, 0], [16, 16], target_memory=pl.MemorySpace.Left)
        return pl.store(t, [0, 0], o)
