"""Hand-written pl.system synchronisation in a loop (run under strategy PTOAS).

Per 16-row block: y = exp(x) * 2.  Each iteration: load (MTE2) -> V ops -> store (MTE3), with the
cross-iteration hazards (next load overwrites the tile the previous store still reads) ordered by a
MTE3 -> MTE2 flag pair at the end of the body.
"""

import pypto.language as pl

ROWS, COLS, BLK = 64, 64, 16


@pl.program
class HandSync:
    @pl.function(type=pl.FunctionType.InCore)
    def k(
        self, x: pl.Tensor[[ROWS, COLS], pl.FP32], y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]
    ) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
        for r in pl.range(0, ROWS, BLK):
            t = pl.load(x, [r, 0], [BLK, COLS])
            pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
            pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
            e = pl.exp(t)
            pl.system.bar_v()
            u = pl.mul(e, 2.0)
            pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=0)
            pl.system.sync_dst(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=0)
            y = pl.store(u, [r, 0], y)
            pl.system.sync_src(set_pipe=2, wait_pipe=1, event_id=1)
            pl.system.sync_dst(set_pipe=2, wait_pipe=1, event_id=1)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[ROWS, COLS], pl.FP32]) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
        y: pl.Tensor[[ROWS, COLS], pl.FP32] = pl.create_tensor([ROWS, COLS], dtype=pl.FP32)
        y = self.k(x, y)
        return y
