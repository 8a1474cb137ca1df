# error: 5: must be an identifier
# fixed (was a strict xfail): pl.dynamic("1bad") raises a raw ValueError: the CLI prints a Python traceback
import pypto.language as pl

M = pl.dynamic("1bad")


@pl.program
class Bad:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[M, 16], pl.FP32], o: pl.Out[pl.Tensor[[M, 16], pl.FP32]]) -> pl.Tensor[[M, 16], pl.FP32]:
        t = pl.load(a, [0, 0], [16, 16])
        return pl.store(t, [0, 0], o)
