"""Nested pl.range over row and column blocks: y[r, c] = x[r, c] * (rb + 1) + cb (block indices)."""

import pypto.language as pl

ROWS, COLS, BR, BC = 64, 128, 16, 32


@pl.program
class Nested:
    @pl.function(type=pl.FunctionType.InCore)
    def grid(
        self, x: pl.Tensor[[ROWS, COLS], pl.FP32], y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]
    ) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
        for rb in pl.range(ROWS // BR):
            for cb in pl.range(COLS // BC):
                t = pl.load(x, [rb * BR, cb * BC], [BR, BC])
                scale: pl.Scalar[pl.FP32] = pl.cast(rb + 1, pl.FP32)
                u = pl.mul(t, scale)
                v = pl.add(u, pl.cast(cb, pl.FP32))
                y = pl.store(v, [rb * BR, cb * BC], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[ROWS, COLS], pl.FP32]) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
        y: pl.Tensor[[ROWS, COLS], pl.FP32] = pl.create_tensor([ROWS, COLS], dtype=pl.FP32)
        y = self.grid(x, y)
        return y
