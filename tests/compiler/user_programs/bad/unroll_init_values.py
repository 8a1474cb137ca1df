# error: 10: pl.unroll does not take init_values
import pypto.language as pl


@pl.program
class Bad:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[64, 16], pl.FP32], o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        z = pl.block.full([16, 16], pl.FP32, 0.0)
        for i, (acc,) in pl.unroll(4, init_values=(z,)):
            t = pl.load(a, [i * 16, 0], [16, 16])
            r = pl.yield_(pl.add(acc, t))
        return pl.store(r, [0, 0], o)
