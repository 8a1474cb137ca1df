# error: 10: chunk_policy
# fixed (was a strict xfail): chunk_policy other than "leading_full" is silently accepted (spec §3.1: only "leading_full")
import pypto.language as pl


@pl.program
class Bad:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[64, 16], pl.FP32], o: pl.Out[pl.Tensor[[64, 16], pl.FP32]]) -> pl.Tensor[[64, 16], pl.FP32]:
        for i in pl.range(4, chunk=2, chunk_policy="trailing_full"):
            t = pl.load(a, [i * 16, 0], [16, 16])
            o = pl.store(t, [i * 16, 0], o)
        return o
