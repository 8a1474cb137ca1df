# error: 8: parameter 't' is a pl.Tile; tiles cannot be function parameters
import pypto.language as pl


@pl.program
class Bad:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, t: pl.Tile[[16, 16], pl.FP32], o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        return pl.store(t, [0, 0], o)
