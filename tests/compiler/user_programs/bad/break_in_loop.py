# error: 15: unsupported syntax: 'break'
import pypto.language as pl


@pl.program
class Bad:
    @pl.function(type=pl.FunctionType.InCore)
    def k(
        self, x: pl.Tensor[[64, 32], pl.FP32], o: pl.Out[pl.Tensor[[64, 32], pl.FP32]]
    ) -> pl.Tensor[[64, 32], pl.FP32]:
        for r in pl.range(0, 64, 16):
            t = pl.load(x, [r, 0], [16, 32])
            o = pl.store(t, [r, 0], o)
            if r == 32:
                break
        return o
