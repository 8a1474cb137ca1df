"""Scaled softmax written with @pl.inline helpers (a nested inline call and a closure constant)."""

import pypto.language as pl

ROWS, COLS, BLK = 64, 64, 16
SCALE = 0.125


@pl.inline
def row_max_sub(t, tmp):
    m = pl.row_max(t, tmp)
    return pl.row_expand_sub(t, m)


@pl.inline
def softmax_tile(t, tmp):
    e = pl.exp(row_max_sub(pl.mul(t, SCALE), tmp))
    s = pl.row_sum(e, tmp)
    return pl.row_expand_div(e, s)


@pl.program
class InlineSoftmax:
    @pl.function(type=pl.FunctionType.InCore)
    def sm(
        self, x: pl.Tensor[[ROWS, COLS], pl.FP32], y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]
    ) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
        for r in pl.range(0, ROWS, BLK):
            t = pl.load(x, [r, 0], [BLK, COLS])
            tmp = pl.create_tile([BLK, COLS], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)
            p = softmax_tile(t, tmp)
            y = pl.store(p, [r, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[ROWS, COLS], pl.FP32]) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
        y: pl.Tensor[[ROWS, COLS], pl.FP32] = pl.create_tensor([ROWS, COLS], dtype=pl.FP32)
        y = self.sm(x, y)
        return y
