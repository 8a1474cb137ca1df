"""Matmul through the cube path: DDR -> Mat -> Left/Right -> Acc -> DDR (spec §8b)."""

import pypto.language as pl


@pl.program
class Gemm:
    @pl.function(type=pl.FunctionType.InCore)
    def gemm_kernel(
        self,
        a: pl.Tensor[[64, 128], pl.FP16],
        b: pl.Tensor[[128, 64], pl.FP16],
        c: pl.Out[pl.Tensor[[64, 64], pl.FP32]],
    ) -> pl.Tensor[[64, 64], pl.FP32]:
        # K = 128 processed as two slices of 64
        a0 = pl.load(a, [0, 0], [64, 64], target_memory=pl.MemorySpace.Mat)
        b0 = pl.load(b, [0, 0], [64, 64], target_memory=pl.MemorySpace.Mat)
        a0_l = pl.move(a0, target_memory=pl.MemorySpace.Left)
        b0_r = pl.move(b0, target_memory=pl.MemorySpace.Right)
        acc = pl.matmul(a0_l, b0_r)
        a1 = pl.load(a, [0, 64], [64, 64], target_memory=pl.MemorySpace.Mat)
        b1 = pl.load(b, [64, 0], [64, 64], target_memory=pl.MemorySpace.Mat)
        a1_l = pl.move(a1, target_memory=pl.MemorySpace.Left)
        b1_r = pl.move(b1, target_memory=pl.MemorySpace.Right)
        acc2 = pl.matmul_acc(acc, a1_l, b1_r)
        c_out = pl.store(acc2, [0, 0], c)
        return c_out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[64, 128], pl.FP16], b: pl.Tensor[[128, 64], pl.FP16]) -> pl.Tensor[[64, 64], pl.FP32]:
        c: pl.Tensor[[64, 64], pl.FP32] = pl.create_tensor([64, 64], dtype=pl.FP32)
        c = self.gemm_kernel(a, b, c)
        return c
