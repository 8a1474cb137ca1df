"""if/else whose branches run on different pipes (a GM load vs a vector op) inside a loop, merged by a
yield and consumed after the if: sync must cross the if boundary both ways.

y_b = (x_b if b is even else x_{b-1} * 2) + bias_tile, bias_tile loaded once before the loop.
"""

import pypto.language as pl

R, C, NB = 16, 64, 4


@pl.program
class IfPipes:
    @pl.function(type=pl.FunctionType.InCore)
    def k(
        self,
        x: pl.Tensor[[NB * R, C], pl.FP32],
        bias: pl.Tensor[[R, C], pl.FP32],
        y: pl.Out[pl.Tensor[[NB * R, C], pl.FP32]],
    ) -> pl.Tensor[[NB * R, C], pl.FP32]:
        bt = pl.load(bias, [0, 0], [R, C])
        for b in pl.range(NB):
            if b % 2 == 0:
                v: pl.Tile[[R, C], pl.FP32] = pl.yield_(pl.load(x, [b * R, 0], [R, C]))
            else:
                prev = pl.load(x, [(b - 1) * R, 0], [R, C])
                v: pl.Tile[[R, C], pl.FP32] = pl.yield_(pl.mul(prev, 2.0))
            y = pl.store(pl.add(v, bt), [b * R, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[NB * R, C], pl.FP32], bias: pl.Tensor[[R, C], pl.FP32]) -> pl.Tensor[[NB * R, C], pl.FP32]:
        y: pl.Tensor[[NB * R, C], pl.FP32] = pl.create_tensor([NB * R, C], dtype=pl.FP32)
        y = self.k(x, bias, y)
        return y
