"""Orchestration control flow: pl.tensor.read of a control tensor, an if choosing between two kernels,
and a kernel whose loop trip count is a scalar argument computed on the host.

mode = ctl[0, 0]; n = ctl[0, 1].  mode > 0: y = x + 1 else y = x * x; then z = sum of the first n
16-row blocks of y (n <= 4).
"""

import pypto.language as pl

ROWS, C, BLK = 64, 32, 16


@pl.program
class OrchControl:
    @pl.function(type=pl.FunctionType.InCore)
    def plus1(self, x: pl.Tensor[[ROWS, C], pl.FP32], y: pl.Out[pl.Tensor[[ROWS, C], pl.FP32]]) -> pl.Tensor[[ROWS, C], pl.FP32]:
        for r in pl.range(0, ROWS, BLK):
            y = pl.store(pl.add(pl.load(x, [r, 0], [BLK, C]), 1.0), [r, 0], y)
        return y

    @pl.function(type=pl.FunctionType.InCore)
    def square(self, x: pl.Tensor[[ROWS, C], pl.FP32], y: pl.Out[pl.Tensor[[ROWS, C], pl.FP32]]) -> pl.Tensor[[ROWS, C], pl.FP32]:
        for r in pl.range(0, ROWS, BLK):
            t = pl.load(x, [r, 0], [BLK, C])
            y = pl.store(pl.mul(t, t), [r, 0], y)
        return y

    @pl.function(type=pl.FunctionType.InCore)
    def head_sum(
        self, y: pl.Tensor[[ROWS, C], pl.FP32], n: pl.Scalar[pl.INDEX], z: pl.Out[pl.Tensor[[BLK, C], pl.FP32]]
    ) -> pl.Tensor[[BLK, C], pl.FP32]:
        acc0 = pl.block.full([BLK, C], pl.FP32, 0.0)
        for i, (acc,) in pl.range(n, init_values=(acc0,)):
            acc_out = pl.yield_(pl.add(acc, pl.load(y, [i * BLK, 0], [BLK, C])))
        return pl.store(acc_out, [0, 0], z)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[ROWS, C], pl.FP32], ctl: pl.Tensor[[1, 2], pl.INT32]) -> pl.Tensor[[BLK, C], pl.FP32]:
        mode = pl.tensor.read(ctl, [0, 0])
        n = pl.tensor.read(ctl, [0, 1])
        y: pl.Tensor[[ROWS, C], pl.FP32] = pl.create_tensor([ROWS, C], dtype=pl.FP32)
        if mode > 0:
            y1 = self.plus1(x, y)
            yy = pl.yield_(y1)
        else:
            y2 = self.square(x, y)
            yy = pl.yield_(y2)
        z: pl.Tensor[[BLK, C], pl.FP32] = pl.create_tensor([BLK, C], dtype=pl.FP32)
        z = self.head_sum(yy, pl.cast(n, pl.INDEX), z)
        return z
