"""Orchestration loop over row blocks: the kernel takes the row offset as a scalar (y = relu(x) - 0.25)."""

import pypto.language as pl

ROWS, COLS, BLK = 128, 32, 32


@pl.program
class HostLoopOffset:
    @pl.function(type=pl.FunctionType.InCore)
    def block_kernel(
        self,
        x: pl.Tensor[[ROWS, COLS], pl.FP32],
        row: pl.Scalar[pl.INDEX],
        y: pl.InOut[pl.Tensor[[ROWS, COLS], pl.FP32]],
    ) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
        t = pl.load(x, [row, 0], [BLK, COLS])
        r = pl.sub(pl.relu(t), 0.25)
        y_out = pl.store(r, [row, 0], y)
        return y_out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[ROWS, COLS], pl.FP32]) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
        y: pl.Tensor[[ROWS, COLS], pl.FP32] = pl.create_tensor([ROWS, COLS], dtype=pl.FP32)
        for i in pl.range(ROWS // BLK):
            y = self.block_kernel(x, i * BLK, y)
        return y
