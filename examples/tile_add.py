"""Tile add, 128x128 f32: z = x + y + 1 (spec §8a, scaled up), called from an orchestration function."""

import pypto.language as pl

N = 128


@pl.program
class TileAdd:
    @pl.function(type=pl.FunctionType.InCore)
    def add_kernel(
        self,
        x: pl.Tensor[[N, N], pl.FP32],
        y: pl.Tensor[[N, N], pl.FP32],
        z: pl.Out[pl.Tensor[[N, N], pl.FP32]],
    ) -> pl.Tensor[[N, N], pl.FP32]:
        tx: pl.Tile[[N, N], pl.FP32] = pl.load(x, [0, 0], [N, N])
        ty: pl.Tile[[N, N], pl.FP32] = pl.load(y, [0, 0], [N, N])
        tz: pl.Tile[[N, N], pl.FP32] = pl.add(tx, ty)
        tz2: pl.Tile[[N, N], pl.FP32] = pl.add(tz, 1.0)
        z_out: pl.Tensor[[N, N], pl.FP32] = pl.store(tz2, [0, 0], z)
        return z_out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[N, N], pl.FP32], y: pl.Tensor[[N, N], pl.FP32]) -> pl.Tensor[[N, N], pl.FP32]:
        z: pl.Tensor[[N, N], pl.FP32] = pl.create_tensor([N, N], dtype=pl.FP32)
        z = self.add_kernel(x, y, z)
        return z
