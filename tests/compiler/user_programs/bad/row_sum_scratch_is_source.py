# error: 11: pl.row_sum: the scratch tile 'tmp_tile' is also an operand it reads
import pypto.language as pl


@pl.program
class Bad:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 64], pl.FP32], o: pl.Out[pl.Tensor[[16, 1], pl.FP32]],
          y: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        t = pl.load(x, [0, 0], [16, 64])
        s = pl.row_sum(t, t)
        pl.store(s, [0, 0], o)
        return pl.store(t, [0, 0], y)
