"""if/else on the loop variable yielding TWO values (a tile and a scalar) inside a carried loop.

Even blocks are added, odd blocks subtracted; the scalar counts the even blocks:
acc = x0 - x1 + x2 - x3 + x4 - x5, then + number_of_even_blocks (3).
"""

import pypto.language as pl

R, C, NB = 16, 32, 6


@pl.program
class IfYields:
    @pl.function(type=pl.FunctionType.InCore)
    def alt(
        self, x: pl.Tensor[[NB * R, C], pl.FP32], o: pl.Out[pl.Tensor[[R, C], pl.FP32]]
    ) -> pl.Tensor[[R, C], pl.FP32]:
        acc0 = pl.block.full([R, C], pl.FP32, 0.0)
        for i, (acc, evens) in pl.range(0, NB, 1, init_values=(acc0, 0)):
            t = pl.load(x, [i * R, 0], [R, C])
            if i % 2 == 0:
                nxt, e2 = pl.yield_(pl.add(acc, t), evens + 1)
            else:
                d = pl.sub(acc, t)
                nxt, e2 = pl.yield_(d, evens)
            acc_o, ev_o = pl.yield_(nxt, e2)
        res = pl.add(acc_o, pl.cast(ev_o, pl.FP32))
        return pl.store(res, [0, 0], o)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[NB * R, C], pl.FP32]) -> pl.Tensor[[R, C], pl.FP32]:
        o: pl.Tensor[[R, C], pl.FP32] = pl.create_tensor([R, C], dtype=pl.FP32)
        o = self.alt(x, o)
        return o
