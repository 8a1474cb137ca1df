"""pl.parallel and pl.unroll loops in a vector kernel, and an if without yields (ConvertToSSA phi).

y block b (16 rows) = x_b + b for b = 0..3 via pl.parallel; then z = sum_{j<3} (x_0 * (j + 1)) via pl.unroll
into the first block of a second output; the if picks abs or neg by a scalar flag.
"""

import pypto.language as pl

ROWS, COLS, BLK = 64, 32, 16


@pl.program
class LoopKinds:
    @pl.function(type=pl.FunctionType.InCore)
    def k(
        self,
        x: pl.Tensor[[ROWS, COLS], pl.FP32],
        flag: pl.Scalar[pl.INDEX],
        y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]],
        z: pl.Out[pl.Tensor[[BLK, COLS], pl.FP32]],
    ) -> tuple[pl.Tensor[[ROWS, COLS], pl.FP32], pl.Tensor[[BLK, COLS], pl.FP32]]:
        for b in pl.parallel(ROWS // BLK):
            t = pl.load(x, [b * BLK, 0], [BLK, COLS])
            y = pl.store(pl.add(t, pl.cast(b, pl.FP32)), [b * BLK, 0], y)
        x0 = pl.load(x, [0, 0], [BLK, COLS])
        acc = pl.block.full([BLK, COLS], pl.FP32, 0.0)
        for j in pl.unroll(3):
            acc = pl.add(acc, pl.mul(x0, pl.cast(j + 1, pl.FP32)))
        if flag > 0:
            res = pl.abs(acc)
        else:
            res = pl.neg(acc)
        z_out = pl.store(res, [0, 0], z)
        return y, z_out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self, x: pl.Tensor[[ROWS, COLS], pl.FP32], flag: pl.Scalar[pl.INDEX]
    ) -> tuple[pl.Tensor[[ROWS, COLS], pl.FP32], pl.Tensor[[BLK, COLS], pl.FP32]]:
        y: pl.Tensor[[ROWS, COLS], pl.FP32] = pl.create_tensor([ROWS, COLS], dtype=pl.FP32)
        z: pl.Tensor[[BLK, COLS], pl.FP32] = pl.create_tensor([BLK, COLS], dtype=pl.FP32)
        y, z = self.k(x, flag, y, z)
        return y, z
