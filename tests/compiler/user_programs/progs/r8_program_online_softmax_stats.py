"""Seed-era @pl.program: an online (streaming) softmax statistic over the columns of each row block.
The InCore kernel walks 32-column chunks carrying the running max `m` and running sum `l` with
init_values / pl.yield_ (l = l * exp(m_old - m_new) + rowsum(exp(x - m_new))), then writes
log-sum-exp = m + log(l) per row. The orchestration calls it on two halves of the rows (views by
pl.slice) and on the whole tensor."""
import pypto.language as pl

ROWS, COLS, CH, BLK = 32, 128, 32, 16


@pl.program
class OnlineLse:
    @pl.function(type=pl.FunctionType.InCore)
    def lse_rows(
        self,
        x: pl.Tensor[[BLK, COLS], pl.FP32],
        out: pl.Out[pl.Tensor[[BLK, 1], pl.FP32]],
    ) -> pl.Tensor[[BLK, 1], pl.FP32]:
        scratch = pl.create_tile([BLK, CH], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)
        m0 = pl.full([BLK, 1], dtype=pl.FP32, value=-1.0e30)
        l0 = pl.full([BLK, 1], dtype=pl.FP32, value=0.0)
        for c, (m, l) in pl.range(0, COLS, CH, init_values=(m0, l0)):
            t = pl.load(x, [0, c], [BLK, CH])
            mc = pl.row_max(t, scratch)
            mn = pl.maximum(m, mc)
            scale = pl.exp(pl.sub(m, mn))
            e = pl.exp(pl.row_expand_sub(t, mn))
            ln = pl.add(pl.mul(l, scale), pl.row_sum(e, scratch))
            m_next, l_next = pl.yield_(mn, ln)
        res = pl.add(m_next, pl.log(l_next))
        done = pl.store(res, [0, 0], out)
        return done

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[ROWS, COLS], pl.FP32]) -> pl.Tensor[[ROWS, 1], pl.FP32]:
        out: pl.Tensor[[ROWS, 1], pl.FP32] = pl.create_tensor([ROWS, 1], dtype=pl.FP32)
        top = pl.slice(x, [BLK, COLS], [0, 0])
        bot = pl.slice(x, [BLK, COLS], [BLK, 0])
        o_top = pl.slice(out, [BLK, 1], [0, 0])
        o_bot = pl.slice(out, [BLK, 1], [BLK, 0])
        o_top = self.lse_rows(top, o_top)
        o_bot = self.lse_rows(bot, o_bot)
        return out
