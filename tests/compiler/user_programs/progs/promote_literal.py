"""Spec §2.1: a float literal is FP32, so pl.mul(fp16_tile, 0.5) deduces FP32 (stored into an FP32 tensor)."""

import pypto.language as pl


@pl.program
class PromoteLiteral:
    @pl.function(type=pl.FunctionType.InCore)
    def k(
        self, x: pl.Tensor[[16, 16], pl.FP16], o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]
    ) -> pl.Tensor[[16, 16], pl.FP32]:
        t = pl.load(x, [0, 0], [16, 16])
        h = pl.mul(t, 0.5)
        return pl.store(h, [0, 0], o)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP16]) -> pl.Tensor[[16, 16], pl.FP32]:
        o: pl.Tensor[[16, 16], pl.FP32] = pl.create_tensor([16, 16], dtype=pl.FP32)
        o = self.k(x, o)
        return o
