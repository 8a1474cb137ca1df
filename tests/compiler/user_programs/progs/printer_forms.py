"""Programs whose printed text exercises printer corner cases (round-trip through the parser)."""

import pypto.language as pl

M = pl.dynamic("M")


@pl.program
class FullTile:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 32], pl.FP32], o: pl.Out[pl.Tensor[[16, 32], pl.FP32]]
          ) -> pl.Tensor[[16, 32], pl.FP32]:
        z = pl.block.full([16, 32], pl.FP32, 2.0)
        t = pl.load(x, [0, 0], [16, 32])
        return pl.store(pl.mul(t, z), [0, 0], o)


@pl.program
class NaturalWhile:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 32], pl.FP32], o: pl.Out[pl.Tensor[[16, 32], pl.FP32]]
          ) -> pl.Tensor[[16, 32], pl.FP32]:
        acc = pl.load(x, [0, 0], [16, 32])
        k = 0
        while k < 3:
            acc = pl.add(acc, acc)
            k = k + 1
        return pl.store(acc, [0, 0], o)


@pl.program
class TupleCall:
    @pl.function(type=pl.FunctionType.InCore)
    def two(self, a: pl.Tensor[[16, 32], pl.FP32], o1: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
            o2: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> tuple[pl.Tensor[[16, 32], pl.FP32], pl.Tensor[[16, 32], pl.FP32]]:
        t = pl.load(a, [0, 0], [16, 32])
        r1 = pl.store(pl.add(t, 1.0), [0, 0], o1)
        r2 = pl.store(pl.mul(t, 2.0), [0, 0], o2)
        return r1, r2

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 32], pl.FP32]) -> tuple[pl.Tensor[[16, 32], pl.FP32], pl.Tensor[[16, 32], pl.FP32]]:
        o1 = pl.create_tensor([16, 32], dtype=pl.FP32)
        o2 = pl.create_tensor([16, 32], dtype=pl.FP32)
        o1, o2 = self.two(a, o1, o2)
        return o1, o2


@pl.program
class DynRows:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[M, 32], pl.FP32], o: pl.Out[pl.Tensor[[M, 32], pl.FP32]]) -> pl.Tensor[[M, 32], pl.FP32]:
        t = pl.load(x, [0, 0], [16, 32])
        return pl.store(t, [0, 0], o)


@pl.program
class DNLayout:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 32], pl.FP32, pl.DN], o: pl.Out[pl.Tensor[[16, 32], pl.FP32]]
          ) -> pl.Tensor[[16, 32], pl.FP32]:
        t = pl.load(x, [0, 0], [16, 32])
        return pl.store(t, [0, 0], o)
