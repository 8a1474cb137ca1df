# error: 12: k2(): argument 'x' expects Tensor[[64, 32], FP32], got Tile[[64, 32], FP32]
import pypto.language as pl


@pl.program
class Bad:
    @pl.function(type=pl.FunctionType.InCore)
    def k(
        self, x: pl.Tensor[[64, 32], pl.FP32], o: pl.Out[pl.Tensor[[64, 32], pl.FP32]]
    ) -> pl.Tensor[[64, 32], pl.FP32]:
        t = pl.load(x, [0, 0], [64, 32])
        o = self.k2(t, o)
        return o

    @pl.function(type=pl.FunctionType.InCore)
    def k2(
        self, x: pl.Tensor[[64, 32], pl.FP32], o: pl.Out[pl.Tensor[[64, 32], pl.FP32]]
    ) -> pl.Tensor[[64, 32], pl.FP32]:
        return pl.store(pl.load(x, [0, 0], [64, 32]), [0, 0], o)
