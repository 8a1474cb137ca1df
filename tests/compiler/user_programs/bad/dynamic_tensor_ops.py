# error: 11: sum over axes (0,) needs static shapes (got [M, 64])
import pypto.language as pl

M = pl.dynamic("M")


@pl.program
class Bad:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[M, 64], pl.FP32], b: pl.Tensor[[M, 64], pl.FP32]) -> pl.Tensor[[1, 64], pl.FP32]:
        s = pl.sum(a, 0, keepdim=True)
        return s
