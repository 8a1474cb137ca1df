# error: 11: tensor-level ops need static shapes
import pypto.language as pl

M = pl.dynamic("M")


@pl.program
class Bad:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[M, 64], pl.FP32], b: pl.Tensor[[M, 64], pl.FP32]) -> pl.Tensor[[M, 64], pl.FP32]:
        s = pl.add(a, b)
        return s
