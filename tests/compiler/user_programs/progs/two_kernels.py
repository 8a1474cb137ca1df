"""Two InCore kernels in sequence: t = x * 2 + 1, then z = t * y; orchestration threads the temporary."""

import pypto.language as pl

R, C = 64, 64


@pl.program
class TwoKernels:
    @pl.function(type=pl.FunctionType.InCore)
    def scale_shift(
        self, x: pl.Tensor[[R, C], pl.FP32], t: pl.Out[pl.Tensor[[R, C], pl.FP32]]
    ) -> pl.Tensor[[R, C], pl.FP32]:
        tx = pl.load(x, [0, 0], [R, C])
        u = pl.add(pl.mul(tx, 2.0), 1.0)
        return pl.store(u, [0, 0], t)

    @pl.function(type=pl.FunctionType.InCore)
    def times(
        self,
        a: pl.Tensor[[R, C], pl.FP32],
        b: pl.Tensor[[R, C], pl.FP32],
        z: pl.Out[pl.Tensor[[R, C], pl.FP32]],
    ) -> pl.Tensor[[R, C], pl.FP32]:
        ta = pl.load(a, [0, 0], [R, C])
        tb = pl.load(b, [0, 0], [R, C])
        tz = pl.mul(ta, tb)
        z_out = pl.store(tz, [0, 0], z)
        return z_out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[R, C], pl.FP32], y: pl.Tensor[[R, C], pl.FP32]) -> pl.Tensor[[R, C], pl.FP32]:
        t: pl.Tensor[[R, C], pl.FP32] = pl.create_tensor([R, C], dtype=pl.FP32)
        t = self.scale_shift(x, t)
        z: pl.Tensor[[R, C], pl.FP32] = pl.create_tensor([R, C], dtype=pl.FP32)
        z = self.times(t, y, z)
        return z
