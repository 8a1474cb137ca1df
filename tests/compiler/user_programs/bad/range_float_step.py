# error: 11: pl.range bounds and step must be integers, got Scalar[FP32]
import pypto.language as pl


@pl.program
class Bad:
    @pl.function(type=pl.FunctionType.InCore)
    def k(
        self, x: pl.Tensor[[64, 32], pl.FP32], o: pl.Out[pl.Tensor[[64, 32], pl.FP32]]
    ) -> pl.Tensor[[64, 32], pl.FP32]:
        for r in pl.range(0, 64, 16.0):
            t = pl.load(x, [r, 0], [16, 32])
            o = pl.store(t, [r, 0], o)
        return o
