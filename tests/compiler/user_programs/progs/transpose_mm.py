"""Matmul with a transposed right operand via move(transpose=True): c = a @ bt.T (bt is [N, K])."""

import pypto.language as pl

M, K, N = 32, 64, 32


@pl.program
class TransposeMM:
    @pl.function(type=pl.FunctionType.InCore)
    def k(
        self,
        a: pl.Tensor[[M, K], pl.FP16],
        bt: pl.Tensor[[N, K], pl.FP16],
        c: pl.Out[pl.Tensor[[M, N], pl.FP32]],
    ) -> pl.Tensor[[M, N], pl.FP32]:
        am = pl.load(a, [0, 0], [M, K], target_memory=pl.MemorySpace.Mat)
        bm = pl.load(bt, [0, 0], [N, K], target_memory=pl.MemorySpace.Mat)
        al = pl.move(am, target_memory=pl.MemorySpace.Left)
        br = pl.move(bm, target_memory=pl.MemorySpace.Right, transpose=True)
        return pl.store(pl.matmul(al, br), [0, 0], c)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[M, K], pl.FP16], bt: pl.Tensor[[N, K], pl.FP16]) -> pl.Tensor[[M, N], pl.FP32]:
        c: pl.Tensor[[M, N], pl.FP32] = pl.create_tensor([M, N], dtype=pl.FP32)
        c = self.k(a, bt, c)
        return c


@pl.program
class PlainMM:
    @pl.function(type=pl.FunctionType.InCore)
    def k(
        self,
        a: pl.Tensor[[M, K], pl.FP16],
        b: pl.Tensor[[K, N], pl.FP16],
        c: pl.Out[pl.Tensor[[M, N], pl.FP32]],
    ) -> pl.Tensor[[M, N], pl.FP32]:
        am = pl.load(a, [0, 0], [M, K], target_memory=pl.MemorySpace.Mat)
        bm = pl.load(b, [0, 0], [K, N], target_memory=pl.MemorySpace.Mat)
        al = pl.move(am, target_memory=pl.MemorySpace.Left)
        br = pl.move(bm, target_memory=pl.MemorySpace.Right)
        return pl.store(pl.matmul(al, br), [0, 0], c)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[M, K], pl.FP16], b: pl.Tensor[[K, N], pl.FP16]) -> pl.Tensor[[M, N], pl.FP32]:
        c: pl.Tensor[[M, N], pl.FP32] = pl.create_tensor([M, N], dtype=pl.FP32)
        c = self.k(a, b, c)
        return c
