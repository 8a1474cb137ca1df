"""A natural Python `while` loop (no iter args; ConvertToSSA threads k and acc): doubling until k >= 3."""

import pypto.language as pl

R, C = 32, 32


@pl.program
class NaturalWhile:
    @pl.function(type=pl.FunctionType.InCore)
    def doubling(
        self, x: pl.Tensor[[R, C], pl.FP32], o: pl.Out[pl.Tensor[[R, C], pl.FP32]]
    ) -> pl.Tensor[[R, C], pl.FP32]:
        acc = pl.load(x, [0, 0], [R, C])
        k = 0
        while k < 3:
            acc = pl.add(acc, acc)
            k = k + 1
        return pl.store(acc, [0, 0], o)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[R, C], pl.FP32]) -> pl.Tensor[[R, C], pl.FP32]:
        o: pl.Tensor[[R, C], pl.FP32] = pl.create_tensor([R, C], dtype=pl.FP32)
        o = self.doubling(x, o)
        return o
