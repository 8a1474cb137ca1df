"""pl.range with init_values carrying a tile AND two scalars (an FP32 weight and an INDEX counter).

out = sum_i w_i * x_i with w_0 = 1, w_{i+1} = w_i * 0.5, plus the iteration count (4) added at the end.
"""

import pypto.language as pl

R, C, NB = 16, 64, 4


@pl.program
class LoopCarry:
    @pl.function(type=pl.FunctionType.InCore)
    def weighted(
        self, x: pl.Tensor[[NB * R, C], pl.FP32], o: pl.Out[pl.Tensor[[R, C], pl.FP32]]
    ) -> pl.Tensor[[R, C], pl.FP32]:
        acc0 = pl.block.full([R, C], pl.FP32, 0.0)
        w0: pl.Scalar[pl.FP32] = 1.0
        for i, (acc, w, n) in pl.range(NB, init_values=(acc0, w0, 0)):
            t = pl.load(x, [i * R, 0], [R, C])
            acc2 = pl.add(acc, pl.mul(t, w))
            acc_out, _w_out, n_out = pl.yield_(acc2, w * 0.5, n + 1)
        res = pl.add(acc_out, pl.cast(n_out, pl.FP32))
        return pl.store(res, [0, 0], o)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[NB * R, C], pl.FP32]) -> pl.Tensor[[R, C], pl.FP32]:
        o: pl.Tensor[[R, C], pl.FP32] = pl.create_tensor([R, C], dtype=pl.FP32)
        o = self.weighted(x, o)
        return o
