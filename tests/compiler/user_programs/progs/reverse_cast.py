"""Suffix sums with a negative-step pl.range carrying a tile, in FP16 storage with FP32 compute (cast
in, cast out), and the legacy call-form annotations pl.Tensor((..), dtype).

s_b = sum_{j >= b} x_j over 16-row blocks b = 3..0, y_b = fp16(s_b).
"""

import pypto.language as pl

R, C, NB = 16, 64, 4


@pl.program
class ReverseCast:
    @pl.function(type=pl.FunctionType.InCore)
    def suffix(
        self, x: pl.Tensor((NB * R, C), pl.FP16), y: pl.Out[pl.Tensor((NB * R, C), pl.FP16)]
    ) -> pl.Tensor((NB * R, C), pl.FP16):
        acc0 = pl.block.full([R, C], pl.FP32, 0.0)
        for b, (acc, yc) in pl.range(NB - 1, -1, -1, init_values=(acc0, y)):
            t = pl.cast(pl.load(x, [b * R, 0], [R, C]), pl.FP32)
            acc2 = pl.add(acc, t)
            h = pl.cast(acc2, pl.FP16, mode="round")
            y2 = pl.store(h, [b * R, 0], yc)
            _acc_o, y_o = pl.yield_(acc2, y2)
        return y_o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor((NB * R, C), pl.FP16)) -> pl.Tensor((NB * R, C), pl.FP16):
        y = pl.create_tensor([NB * R, C], dtype=pl.FP16)
        y = self.suffix(x, y)
        return y
