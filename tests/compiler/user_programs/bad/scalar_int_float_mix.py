# error: 9: mixes INDEX and FP32
import pypto.language as pl


@pl.program
class Bad:
    @pl.function(type=pl.FunctionType.Orchestration)
    def k(self, n: pl.Scalar[pl.INDEX], x: pl.Scalar[pl.FP32]) -> pl.Scalar[pl.INDEX]:
        m = n + x
        return m
