# error: 10: pl.incore
# fixed (was a strict xfail): 'with pl.incore(1):' is silently accepted (spec §3.4: scopes take no arguments)
import pypto.language as pl


@pl.program
class Bad:
    @pl.function
    def k(self, a: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
        with pl.incore(1):
            b = pl.add(a, a)
        return b
