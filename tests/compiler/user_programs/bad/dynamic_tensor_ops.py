# error: 11: tensor.concat: along a dynamic axis ([M, 64] and [M, 64], axis 0)
import pypto.language as pl

M = pl.dynamic("M")


@pl.program
class Bad:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[M, 64], pl.FP32], b: pl.Tensor[[M, 64], pl.FP32]) -> pl.Tensor[[M, 64], pl.FP32]:
        s = pl.concat(a, b, 0)
        return s
