"""A kernel that writes a GM scratch tensor and reads it back (GM RAW through MTE3 -> MTE2), in a loop.

Phase 1 (loop): w_b = x_b * 2 stored into the InOut scratch w; phase 2 (loop): y_b = w_{3-b} + 1
(reversed block order, so every read depends on a store from a different iteration).
"""

import pypto.language as pl

R, C, NB = 16, 64, 4


@pl.program
class GmRoundTrip:
    @pl.function(type=pl.FunctionType.InCore)
    def k(
        self,
        x: pl.Tensor[[NB * R, C], pl.FP32],
        w: pl.InOut[pl.Tensor[[NB * R, C], pl.FP32]],
        y: pl.Out[pl.Tensor[[NB * R, C], pl.FP32]],
    ) -> pl.Tensor[[NB * R, C], pl.FP32]:
        for b in pl.range(NB):
            t = pl.load(x, [b * R, 0], [R, C])
            w = pl.store(pl.mul(t, 2.0), [b * R, 0], w)
        for b in pl.range(NB):
            u = pl.load(w, [(NB - 1 - b) * R, 0], [R, C])
            y = pl.store(pl.add(u, 1.0), [b * R, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[NB * R, C], pl.FP32]) -> pl.Tensor[[NB * R, C], pl.FP32]:
        w: pl.Tensor[[NB * R, C], pl.FP32] = pl.create_tensor([NB * R, C], dtype=pl.FP32)
        y: pl.Tensor[[NB * R, C], pl.FP32] = pl.create_tensor([NB * R, C], dtype=pl.FP32)
        y = self.k(x, w, y)
        return y
