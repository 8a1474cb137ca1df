"""Row softmax over 32-row blocks in a pl.range loop, called from an orchestration function (spec §8c)."""

import pypto.language as pl

ROWS, COLS, BLK = 256, 64, 32


@pl.program
class RowSoftmax:
    @pl.function(type=pl.FunctionType.InCore)
    def softmax_rows(
        self,
        x: pl.Tensor[[ROWS, COLS], pl.FP32],
        y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]],
    ) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
        for r in pl.range(0, ROWS, BLK):
            t = pl.load(x, [r, 0], [BLK, COLS])
            scratch = pl.create_tile([BLK, COLS], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)
            m = pl.row_max(t, scratch)
            shifted = pl.row_expand_sub(t, m)
            e = pl.exp(shifted)
            s = pl.row_sum(e, scratch)
            p = pl.row_expand_div(e, s)
            y_done = pl.store(p, [r, 0], y)
        return y_done

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[ROWS, COLS], pl.FP32]) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
        y: pl.Tensor[[ROWS, COLS], pl.FP32] = pl.create_tensor([ROWS, COLS], dtype=pl.FP32)
        y = self.softmax_rows(x, y)
        return y
