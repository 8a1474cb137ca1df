# error: 11: memory space Vec overflows
# compile: yes
import pypto.language as pl


@pl.program
class Bad:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[128, 256], pl.FP32], o: pl.Out[pl.Tensor[[128, 256], pl.FP32]]) -> pl.Tensor[[128, 256], pl.FP32]:
        t = pl.load(a, [0, 0], [128, 256])
        u = pl.exp(t)
        v = pl.add(t, u)
        return pl.store(v, [0, 0], o)
