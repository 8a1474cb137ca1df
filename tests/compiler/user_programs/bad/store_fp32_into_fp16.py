# error: 13: pl.store: tile dtype FP32 differs from output tensor dtype FP16
import pypto.language as pl


@pl.program
class Bad:
    @pl.function(type=pl.FunctionType.InCore)
    def k(
        self, x: pl.Tensor[[64, 32], pl.FP32], o: pl.Out[pl.Tensor[[64, 32], pl.FP16]]
    ) -> pl.Tensor[[64, 32], pl.FP16]:
        t = pl.load(x, [0, 0], [64, 32])
        e = pl.exp(t)
        return pl.store(e, [0, 0], o)
