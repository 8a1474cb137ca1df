"""A loop with iter_args and an if with yielded values.

Sums the four 32-row blocks of x, taking block 0 as is and scaling the others by `scale` (a scalar
argument), and counts the iterations in a loop-carried index: y = x0 + scale * (x1 + x2 + x3).
"""

import pypto.language as pl


@pl.program
class BlockSum:
    @pl.function(type=pl.FunctionType.InCore)
    def block_sum(
        self,
        x: pl.Tensor[[128, 64], pl.FP32],
        scale: pl.Scalar[pl.FP32],
        y: pl.Out[pl.Tensor[[32, 64], pl.FP32]],
    ) -> pl.Tensor[[32, 64], pl.FP32]:
        acc0 = pl.block.full([32, 64], pl.FP32, 0.0)
        for i, (acc, n) in pl.range(0, 4, init_values=(acc0, 0)):
            t = pl.load(x, [i * 32, 0], [32, 64])
            if i == 0:
                part: pl.Tile[[32, 64], pl.FP32] = pl.yield_(t)
            else:
                scaled = pl.mul(t, scale)
                part: pl.Tile[[32, 64], pl.FP32] = pl.yield_(scaled)
            acc_next = pl.add(acc, part)
            acc_out, _n_out = pl.yield_(acc_next, n + 1)
        y_out = pl.store(acc_out, [0, 0], y)
        return y_out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[128, 64], pl.FP32], scale: pl.Scalar[pl.FP32]) -> pl.Tensor[[32, 64], pl.FP32]:
        y: pl.Tensor[[32, 64], pl.FP32] = pl.create_tensor([32, 64], dtype=pl.FP32)
        y = self.block_sum(x, scale, y)
        return y
