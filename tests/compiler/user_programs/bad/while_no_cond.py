# error: 12: the first statement of a pl.while_ loop must be pl.cond(...)
import pypto.language as pl


@pl.program
class Bad:
    @pl.function(type=pl.FunctionType.InCore)
    def k(
        self, x: pl.Tensor[[64, 32], pl.FP32], o: pl.Out[pl.Tensor[[64, 32], pl.FP32]]
    ) -> pl.Tensor[[64, 32], pl.FP32]:
        t = pl.load(x, [0, 0], [64, 32])
        for (k, acc) in pl.while_(init_values=(0, t)):
            acc2 = pl.add(acc, acc)
            pl.cond(k < 3)
            _k_out, acc_out = pl.yield_(k + 1, acc2)
        return pl.store(acc_out, [0, 0], o)
