"""Scalar % and // on a negative loop-derived value inside an InCore loop (Python floor semantics).

Block i of x is added when (i - 3) % 4 == 1 (i = 0 and 4) and when (i - 3) // 4 == -1 (i = 0, 1, 2).
"""

import pypto.language as pl

R, C, NB = 16, 32, 6


@pl.program
class NegMod:
    @pl.function(type=pl.FunctionType.InCore)
    def pick(
        self, x: pl.Tensor[[NB * R, C], pl.FP32], o: pl.Out[pl.Tensor[[R, C], pl.FP32]]
    ) -> pl.Tensor[[R, C], pl.FP32]:
        acc0 = pl.block.full([R, C], pl.FP32, 0.0)
        for i, (acc,) in pl.range(0, NB, 1, init_values=(acc0,)):
            t = pl.load(x, [i * R, 0], [R, C])
            if (i - 3) % 4 == 1:
                a1 = pl.yield_(pl.add(acc, t))
            else:
                a1 = pl.yield_(acc)
            if (i - 3) // 4 == -1:
                a2 = pl.yield_(pl.add(a1, pl.mul(t, 10.0)))
            else:
                a2 = pl.yield_(a1)
            acc_o = pl.yield_(a2)
        return pl.store(acc_o, [0, 0], o)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[NB * R, C], pl.FP32]) -> pl.Tensor[[R, C], pl.FP32]:
        o: pl.Tensor[[R, C], pl.FP32] = pl.create_tensor([R, C], dtype=pl.FP32)
        o = self.pick(x, o)
        return o
