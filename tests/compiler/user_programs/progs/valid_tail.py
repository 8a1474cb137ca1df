"""Keyword-only call forms and valid_shapes: a 40-row tensor handled as 16-row tiles, the last one partial.

y = x * 3 - 1, rows 0..39.  The tail tile's window [32, 48) is larger than the tensor; only its valid
[8, COLS] region is read and written.
"""

import pypto.language as pl

ROWS, COLS, BLK = 40, 32, 16


@pl.program
class KeywordsValid:
    @pl.function(type=pl.FunctionType.InCore)
    def k(
        self, x: pl.Tensor[[ROWS, COLS], pl.FP32], y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]
    ) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
        for i in pl.range(0, 2):
            t = pl.load(x, offsets=[i * BLK, 0], shapes=[BLK, COLS], target_memory=pl.MemorySpace.Vec)
            u = pl.sub(pl.mul(t, 3.0), 1.0)
            y = pl.store(u, offsets=[i * BLK, 0], output_tensor=y)
        tail = pl.load(x, offsets=[32, 0], shapes=[BLK, COLS], valid_shapes=[8, COLS],
                       target_memory=pl.MemorySpace.Vec)
        tu = pl.sub(pl.mul(tail, 3.0), 1.0)
        y2 = pl.store(tile=tu, offsets=[32, 0], output_tensor=y)
        return y2

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[ROWS, COLS], pl.FP32]) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
        y: pl.Tensor[[ROWS, COLS], pl.FP32] = pl.create_tensor(shape=[ROWS, COLS], dtype=pl.FP32)
        y = self.k(x, y)
        return y
