# error: 11: unsupported syntax: nested function definitions
import pypto.language as pl


@pl.program
class Bad:
    @pl.function(type=pl.FunctionType.InCore)
    def k(
        self, x: pl.Tensor[[64, 32], pl.FP32], o: pl.Out[pl.Tensor[[64, 32], pl.FP32]]
    ) -> pl.Tensor[[64, 32], pl.FP32]:
        def helper(a):
            return pl.add(a, a)

        t = pl.load(x, [0, 0], [64, 32])
        return pl.store(helper(t), [0, 0], o)
