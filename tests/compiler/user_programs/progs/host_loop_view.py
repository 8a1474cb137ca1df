"""Orchestration loop over row blocks with pl.tensor.view: each call sees a [BLK, COLS] window."""

import pypto.language as pl

ROWS, COLS, BLK = 128, 64, 32


@pl.program
class HostLoopView:
    @pl.function(type=pl.FunctionType.InCore)
    def blk(
        self,
        x: pl.Tensor[[BLK, COLS], pl.FP32],
        y: pl.Out[pl.Tensor[[BLK, COLS], pl.FP32]],
    ) -> pl.Tensor[[BLK, COLS], pl.FP32]:
        t = pl.load(x, [0, 0], [BLK, COLS])
        r = pl.mul(pl.exp(t), 0.5)
        return pl.store(r, [0, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[ROWS, COLS], pl.FP32]) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
        y: pl.Tensor[[ROWS, COLS], pl.FP32] = pl.create_tensor([ROWS, COLS], dtype=pl.FP32)
        for i in pl.range(0, ROWS, BLK):
            xv = pl.tensor.view(x, [BLK, COLS], [i, 0])
            yv = pl.tensor.view(y, [BLK, COLS], [i, 0])
            yv = self.blk(xv, yv)
        return y


@pl.program
class ColumnViews:
    """Column-block views (non-contiguous windows): y[:, j:j+32] = x[:, j:j+32] + j."""

    @pl.function(type=pl.FunctionType.InCore)
    def blk(
        self,
        x: pl.Tensor[[ROWS, 32], pl.FP32],
        j: pl.Scalar[pl.INDEX],
        y: pl.Out[pl.Tensor[[ROWS, 32], pl.FP32]],
    ) -> pl.Tensor[[ROWS, 32], pl.FP32]:
        t = pl.load(x, [0, 0], [ROWS, 32])
        return pl.store(pl.add(t, pl.cast(j, pl.FP32)), [0, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[ROWS, COLS], pl.FP32]) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
        y: pl.Tensor[[ROWS, COLS], pl.FP32] = pl.create_tensor([ROWS, COLS], dtype=pl.FP32)
        for j in pl.range(0, COLS, 32):
            xv = pl.view(x, [ROWS, 32], [0, j])
            yv = pl.view(y, [ROWS, 32], [0, j])
            yv = self.blk(xv, j, yv)
        return y
