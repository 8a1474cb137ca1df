"""An external module-level @pl.function called by bare name, and a kernel with two results."""

import pypto.language as pl

R, C = 32, 64


@pl.function(type=pl.FunctionType.InCore)
def square_kernel(x: pl.Tensor[[R, C], pl.FP32], o: pl.Out[pl.Tensor[[R, C], pl.FP32]]) -> pl.Tensor[[R, C], pl.FP32]:
    t = pl.load(x, [0, 0], [R, C])
    return pl.store(pl.mul(t, t), [0, 0], o)


@pl.program
class ExternalMulti:
    @pl.function(type=pl.FunctionType.InCore)
    def sum_diff(
        self,
        a: pl.Tensor[[R, C], pl.FP32],
        b: pl.Tensor[[R, C], pl.FP32],
        s: pl.Out[pl.Tensor[[R, C], pl.FP32]],
        d: pl.Out[pl.Tensor[[R, C], pl.FP32]],
    ) -> tuple[pl.Tensor[[R, C], pl.FP32], pl.Tensor[[R, C], pl.FP32]]:
        ta = pl.load(a, [0, 0], [R, C])
        tb = pl.load(b, [0, 0], [R, C])
        s_out = pl.store(pl.add(ta, tb), [0, 0], s)
        d_out = pl.store(pl.sub(ta, tb), [0, 0], d)
        return s_out, d_out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self, a: pl.Tensor[[R, C], pl.FP32], b: pl.Tensor[[R, C], pl.FP32]
    ) -> tuple[pl.Tensor[[R, C], pl.FP32], pl.Tensor[[R, C], pl.FP32]]:
        s: pl.Tensor[[R, C], pl.FP32] = pl.create_tensor([R, C], dtype=pl.FP32)
        d: pl.Tensor[[R, C], pl.FP32] = pl.create_tensor([R, C], dtype=pl.FP32)
        s, d = self.sum_diff(a, b, s, d)
        sq: pl.Tensor[[R, C], pl.FP32] = pl.create_tensor([R, C], dtype=pl.FP32)
        sq = square_kernel(d, sq)
        return s, sq
