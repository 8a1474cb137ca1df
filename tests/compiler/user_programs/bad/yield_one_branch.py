# error: 13: if one branch yields values, the other branch must yield too
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
                v: pl.Tile[[64, 32], pl.FP32] = pl.yield_(t)
            else:
                w = pl.add(t, t)  # noqa: F841
        return pl.store(v, [0, 0], o)
