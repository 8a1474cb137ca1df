"""An Opaque function with a `with pl.incore():` scope (OutlineIncoreScopes makes the kernel)."""

import pypto.language as pl

R, C = 32, 32


@pl.program
class IncoreScope:
    @pl.function
    def main(self, x: pl.Tensor[[R, C], pl.FP32], y: pl.Tensor[[R, C], pl.FP32]) -> pl.Tensor[[R, C], pl.FP32]:
        with pl.incore():
            tx = pl.load(x, [0, 0], [R, C])
            ty = pl.load(y, [0, 0], [R, C])
            tz = pl.add(pl.mul(tx, ty), 1.0)
            z = pl.store(tz, [0, 0], y)
        return z
