# error: 10: pl.row_max takes 2 argument(s) (tile, tmp_tile), got 1
import pypto.language as pl


@pl.program
class Bad:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 16], pl.FP32], o: pl.Out[pl.Tensor[[16, 1], pl.FP32]]) -> pl.Tensor[[16, 1], pl.FP32]:
        t = pl.load(a, [0, 0], [16, 16])
        m = pl.row_max(t)
        return pl.store(m, [0, 0], o)
