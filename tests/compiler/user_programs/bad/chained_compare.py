# error: 10: chained comparisons are not supported
import pypto.language as pl


@pl.program
class Bad:
    @pl.function(type=pl.FunctionType.Orchestration)
    def k(self, n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        m = n
        if 0 < n < 4:
            m = n + 1
        return m
