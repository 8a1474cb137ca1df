"""Scalar float % on a negative value inside an InCore loop: block i is scaled by (i - 3.0) % 2.5 (Python: 2.0 for i = 0)."""

import pypto.language as pl

R, C, NB = 16, 32, 6


@pl.program
class FMod:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[NB * R, C], pl.FP32], o: pl.Out[pl.Tensor[[NB * R, C], pl.FP32]]) -> pl.Tensor[[NB * R, C], pl.FP32]:
        for i in pl.range(0, NB, 1):
            t = pl.load(x, [i * R, 0], [R, C])
            s = pl.cast(i, pl.FP32)
            m = (s - 3.0) % 2.5
            u = pl.mul(t, m)
            o = pl.store(u, [i * R, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[NB * R, C], pl.FP32]) -> pl.Tensor[[NB * R, C], pl.FP32]:
        o: pl.Tensor[[NB * R, C], pl.FP32] = pl.create_tensor([NB * R, C], dtype=pl.FP32)
        o = self.k(x, o)
        return o
