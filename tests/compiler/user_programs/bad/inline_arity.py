# error: 17: inline function 'axpy' takes 3 positional argument(s) (a, x, y), 2 given
import pypto.language as pl


@pl.inline
def axpy(a, x, y):
    return pl.add(pl.mul(x, a), y)


@pl.program
class Bad:
    @pl.function(type=pl.FunctionType.InCore)
    def k(
        self, x: pl.Tensor[[64, 32], pl.FP32], o: pl.Out[pl.Tensor[[64, 32], pl.FP32]]
    ) -> pl.Tensor[[64, 32], pl.FP32]:
        t = pl.load(x, [0, 0], [64, 32])
        r = axpy(2.0, t)
        return pl.store(r, [0, 0], o)
