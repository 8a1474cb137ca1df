# error: 15: pl.add: shapes [64, 32] and [32, 32] cannot be broadcast
import pypto.language as pl


@pl.program
class Bad:
    @pl.function(type=pl.FunctionType.InCore)
    def k(
        self, x: pl.Tensor[[64, 32], pl.FP32], o: pl.Out[pl.Tensor[[64, 32], pl.FP32]]
    ) -> pl.Tensor[[64, 32], pl.FP32]:
        t = pl.load(x, [0, 0], [64, 32])
        for i in pl.range(2):
            if i == 0:
                u = pl.load(x, [0, 0], [32, 32])
                v = pl.add(t, u)
            else:
                v = t
        return pl.store(v, [0, 0], o)
