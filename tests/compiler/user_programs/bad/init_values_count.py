# error: 12: 2 loop-carried names but 1 init_values
import pypto.language as pl


@pl.program
class Bad:
    @pl.function(type=pl.FunctionType.InCore)
    def k(
        self, x: pl.Tensor[[64, 32], pl.FP32], o: pl.Out[pl.Tensor[[64, 32], pl.FP32]]
    ) -> pl.Tensor[[64, 32], pl.FP32]:
        acc0 = pl.block.full([16, 32], pl.FP32, 0.0)
        for r, (acc, n) in pl.range(4, init_values=(acc0,)):
            acc2 = pl.add(acc, pl.load(x, [r * 16, 0], [16, 32]))
            acc_out, _n_out = pl.yield_(acc2, n + 1)
        return pl.store(acc_out, [0, 0], o)
