"""pl.while_ with init_values and pl.cond: acc = sum of the first n row blocks (n a scalar argument)."""

import pypto.language as pl

R, C, NB = 16, 64, 8


@pl.program
class WhileSum:
    @pl.function(type=pl.FunctionType.InCore)
    def head_sum(
        self,
        x: pl.Tensor[[NB * R, C], pl.FP32],
        n: pl.Scalar[pl.INDEX],
        o: pl.Out[pl.Tensor[[R, C], pl.FP32]],
    ) -> pl.Tensor[[R, C], pl.FP32]:
        acc0 = pl.block.full([R, C], pl.FP32, 0.0)
        for (k, acc) in pl.while_(init_values=(0, acc0)):
            pl.cond(k < n)
            t = pl.load(x, [k * R, 0], [R, C])
            acc2 = pl.add(acc, t)
            _k_out, acc_out = pl.yield_(k + 1, acc2)
        return pl.store(acc_out, [0, 0], o)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[NB * R, C], pl.FP32], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[R, C], pl.FP32]:
        o: pl.Tensor[[R, C], pl.FP32] = pl.create_tensor([R, C], dtype=pl.FP32)
        o = self.head_sum(x, n, o)
        return o
