"""FP16, BF16 and INT32 kernels (constants kept in the tile dtype with pl.const)."""

import pypto.language as pl

R, C = 32, 64


@pl.program
class Half:
    @pl.function(type=pl.FunctionType.InCore)
    def k(
        self,
        a: pl.Tensor[[R, C], pl.FP16],
        b: pl.Tensor[[R, C], pl.FP16],
        o: pl.Out[pl.Tensor[[R, C], pl.FP16]],
    ) -> pl.Tensor[[R, C], pl.FP16]:
        ta = pl.load(a, [0, 0], [R, C])
        tb = pl.load(b, [0, 0], [R, C])
        h = pl.mul(ta, pl.const(0.5, pl.FP16))
        m = pl.maximum(h, tb)
        r = pl.add(m, pl.mul(ta, tb))
        return pl.store(r, [0, 0], o)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[R, C], pl.FP16], b: pl.Tensor[[R, C], pl.FP16]) -> pl.Tensor[[R, C], pl.FP16]:
        o: pl.Tensor[[R, C], pl.FP16] = pl.create_tensor([R, C], dtype=pl.FP16)
        o = self.k(a, b, o)
        return o


@pl.program
class BFloat:
    @pl.function(type=pl.FunctionType.InCore)
    def k(
        self,
        a: pl.Tensor[[R, C], pl.BF16],
        b: pl.Tensor[[R, C], pl.BF16],
        o: pl.Out[pl.Tensor[[R, C], pl.BF16]],
    ) -> pl.Tensor[[R, C], pl.BF16]:
        # A2/A3 has no bf16 tile-tile arithmetic (tsub bf16 is A5 only): compute in FP32
        ta = pl.cast(pl.load(a, [0, 0], [R, C]), pl.FP32)
        tb = pl.cast(pl.load(b, [0, 0], [R, C]), pl.FP32)
        s = pl.sub(ta, tb)
        r = pl.mul(s, 2.0)
        return pl.store(pl.cast(r, pl.BF16), [0, 0], o)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[R, C], pl.BF16], b: pl.Tensor[[R, C], pl.BF16]) -> pl.Tensor[[R, C], pl.BF16]:
        o: pl.Tensor[[R, C], pl.BF16] = pl.create_tensor([R, C], dtype=pl.BF16)
        o = self.k(a, b, o)
        return o


@pl.program
class Int32:
    @pl.function(type=pl.FunctionType.InCore)
    def k(
        self,
        a: pl.Tensor[[R, C], pl.INT32],
        b: pl.Tensor[[R, C], pl.INT32],
        o: pl.Out[pl.Tensor[[R, C], pl.INT32]],
    ) -> pl.Tensor[[R, C], pl.INT32]:
        ta = pl.load(a, [0, 0], [R, C])
        tb = pl.load(b, [0, 0], [R, C])
        p = pl.mul(ta, tb)
        q = pl.add(p, pl.const(7, pl.INT32))
        r = pl.maxs(pl.sub(q, ta), pl.const(-3, pl.INT32))
        return pl.store(r, [0, 0], o)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[R, C], pl.INT32], b: pl.Tensor[[R, C], pl.INT32]) -> pl.Tensor[[R, C], pl.INT32]:
        o: pl.Tensor[[R, C], pl.INT32] = pl.create_tensor([R, C], dtype=pl.INT32)
        o = self.k(a, b, o)
        return o
