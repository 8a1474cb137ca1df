# error: 11: unknown op 'pl.block.lod'
import pypto.language as pl


@pl.program
class Bad:
    @pl.function(type=pl.FunctionType.InCore)
    def k(
        self, x: pl.Tensor[[64, 32], pl.FP32], o: pl.Out[pl.Tensor[[64, 32], pl.FP32]]
    ) -> pl.Tensor[[64, 32], pl.FP32]:
        t = pl.block.lod(x, [0, 0], [64, 32])
        return pl.store(t, [0, 0], o)
