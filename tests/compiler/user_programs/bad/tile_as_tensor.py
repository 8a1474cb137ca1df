# error: 12: pl.load: argument 'tensor' must be a Tensor, got Tile[[64, 32], FP32]
import pypto.language as pl


@pl.program
class Bad:
    @pl.function(type=pl.FunctionType.InCore)
    def k(
        self, x: pl.Tensor[[64, 32], pl.FP32], o: pl.Out[pl.Tensor[[64, 32], pl.FP32]]
    ) -> pl.Tensor[[64, 32], pl.FP32]:
        t = pl.load(x, [0, 0], [64, 32])
        u = pl.load(t, [0, 0], [16, 32])
        return pl.store(u, [0, 0], o)
