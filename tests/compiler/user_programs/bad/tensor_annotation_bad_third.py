# error: 9: unexpected annotation argument
# fixed (was a strict xfail): pl.Tensor[[..], pl.FP32, pl.FP16] raises a raw TypeError: the CLI prints a Python traceback
import pypto.language as pl


@pl.program
class Bad:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 16], pl.FP32, pl.FP16],
          o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        t = pl.load(a, [0, 0], [16, 16])
        return pl.store(t, [0, 0], o)
