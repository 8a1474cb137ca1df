"""Keyword-only call forms and valid_shapes: 48-row tensors, 16-row tiles, the last one loaded with
valid_shapes [8, COLS], so only rows 32..39 of it are written: rows 40..47 of the InOut output keep
their value.  y = x * 3 - 1 on rows 0..39.
"""

import pypto.language as pl

COLS, BLK = 32, 16


@pl.program
class ValidInBounds:
    @pl.function(type=pl.FunctionType.InCore)
    def k(
        self, x: pl.Tensor[[48, COLS], pl.FP32], y: pl.InOut[pl.Tensor[[48, COLS], pl.FP32]]
    ) -> pl.Tensor[[48, COLS], pl.FP32]:
        for i in pl.range(0, 2):
            t = pl.load(x, offsets=[i * BLK, 0], shapes=[BLK, COLS], target_memory=pl.MemorySpace.Vec)
            u = pl.sub(pl.mul(t, 3.0), 1.0)
            y = pl.store(u, offsets=[i * BLK, 0], output_tensor=y)
        tail = pl.load(x, offsets=[32, 0], shapes=[BLK, COLS], valid_shapes=[8, COLS],
                       target_memory=pl.MemorySpace.Vec)
        tu = pl.sub(pl.mul(tail, 3.0), 1.0)
        y2 = pl.store(tile=tu, offsets=[32, 0], output_tensor=y)
        return y2
