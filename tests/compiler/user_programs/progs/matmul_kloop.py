"""Matmul with K-loop accumulation: matmul_acc carried through pl.range init_values (K = 256 in 4 slices)."""

import pypto.language as pl

M, K, N, KB = 32, 256, 64, 64


@pl.program
class MatmulKLoop:
    @pl.function(type=pl.FunctionType.InCore)
    def mm(
        self,
        a: pl.Tensor[[M, K], pl.FP16],
        b: pl.Tensor[[K, N], pl.FP16],
        c: pl.Out[pl.Tensor[[M, N], pl.FP32]],
    ) -> pl.Tensor[[M, N], pl.FP32]:
        a0 = pl.load(a, [0, 0], [M, KB], target_memory=pl.MemorySpace.Mat)
        b0 = pl.load(b, [0, 0], [KB, N], target_memory=pl.MemorySpace.Mat)
        acc0 = pl.matmul(pl.move(a0, target_memory=pl.MemorySpace.Left), pl.move(b0, target_memory=pl.MemorySpace.Right))
        for kb, (acc,) in pl.range(1, K // KB, init_values=(acc0,)):
            ak = pl.load(a, [0, kb * KB], [M, KB], target_memory=pl.MemorySpace.Mat)
            bk = pl.load(b, [kb * KB, 0], [KB, N], target_memory=pl.MemorySpace.Mat)
            ak_l = pl.move(ak, target_memory=pl.MemorySpace.Left)
            bk_r = pl.move(bk, target_memory=pl.MemorySpace.Right)
            acc_next = pl.matmul_acc(acc, ak_l, bk_r)
            acc_out = pl.yield_(acc_next)
        return pl.store(acc_out, [0, 0], c)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[M, K], pl.FP16], b: pl.Tensor[[K, N], pl.FP16]) -> pl.Tensor[[M, N], pl.FP32]:
        c: pl.Tensor[[M, N], pl.FP32] = pl.create_tensor([M, N], dtype=pl.FP32)
        c = self.mm(a, b, c)
        return c


@pl.program
class MatmulBias:
    """c = a @ b + bias, bias [1, N] in FP32, FP32 operands."""

    @pl.function(type=pl.FunctionType.InCore)
    def mmb(
        self,
        a: pl.Tensor[[M, 64], pl.FP32],
        b: pl.Tensor[[64, N], pl.FP32],
        bias: pl.Tensor[[1, N], pl.FP32],
        c: pl.Out[pl.Tensor[[M, N], pl.FP32]],
    ) -> pl.Tensor[[M, N], pl.FP32]:
        am = pl.load(a, [0, 0], [M, 64], target_memory=pl.MemorySpace.Mat)
        bm = pl.load(b, [0, 0], [64, N], target_memory=pl.MemorySpace.Mat)
        biasm = pl.load(bias, [0, 0], [1, N], target_memory=pl.MemorySpace.Mat)
        al = pl.move(am, target_memory=pl.MemorySpace.Left)
        br = pl.move(bm, target_memory=pl.MemorySpace.Right)
        r = pl.matmul_bias(al, br, biasm)
        return pl.store(r, [0, 0], c)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self, a: pl.Tensor[[M, 64], pl.FP32], b: pl.Tensor[[64, N], pl.FP32], bias: pl.Tensor[[1, N], pl.FP32]
    ) -> pl.Tensor[[M, N], pl.FP32]:
        c: pl.Tensor[[M, N], pl.FP32] = pl.create_tensor([M, N], dtype=pl.FP32)
        c = self.mmb(a, b, bias, c)
        return c


@pl.program
class MatmulTiled:
    """Orchestration loop over N blocks; each call is a K-looped matmul on one [M, NB] column block."""

    @pl.function(type=pl.FunctionType.InCore)
    def mm_col(
        self,
        a: pl.Tensor[[M, K], pl.FP16],
        b: pl.Tensor[[K, N], pl.FP16],
        col: pl.Scalar[pl.INDEX],
        c: pl.InOut[pl.Tensor[[M, N], pl.FP32]],
    ) -> pl.Tensor[[M, N], pl.FP32]:
        a0 = pl.load(a, [0, 0], [M, KB], target_memory=pl.MemorySpace.Mat)
        b0 = pl.load(b, [0, col], [KB, 32], target_memory=pl.MemorySpace.Mat)
        acc0 = pl.matmul(pl.move(a0, target_memory=pl.MemorySpace.Left), pl.move(b0, target_memory=pl.MemorySpace.Right))
        for kb, (acc,) in pl.range(1, K // KB, init_values=(acc0,)):
            ak = pl.load(a, [0, kb * KB], [M, KB], target_memory=pl.MemorySpace.Mat)
            bk = pl.load(b, [kb * KB, col], [KB, 32], target_memory=pl.MemorySpace.Mat)
            acc_next = pl.matmul_acc(acc, pl.move(ak, target_memory=pl.MemorySpace.Left),
                                     pl.move(bk, target_memory=pl.MemorySpace.Right))
            acc_out = pl.yield_(acc_next)
        return pl.store(acc_out, [0, col], c)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[M, K], pl.FP16], b: pl.Tensor[[K, N], pl.FP16]) -> pl.Tensor[[M, N], pl.FP32]:
        c: pl.Tensor[[M, N], pl.FP32] = pl.create_tensor([M, N], dtype=pl.FP32)
        for j in pl.range(0, N, 32):
            c = self.mm_col(a, b, j, c)
        return c


@pl.program
class MatmulSimpleLoop:
    """The same K loop without init_values: acc is re-assigned in a simple loop (ConvertToSSA threads it)."""

    @pl.function(type=pl.FunctionType.InCore)
    def mm(
        self,
        a: pl.Tensor[[M, K], pl.FP16],
        b: pl.Tensor[[K, N], pl.FP16],
        c: pl.Out[pl.Tensor[[M, N], pl.FP32]],
    ) -> pl.Tensor[[M, N], pl.FP32]:
        a0 = pl.load(a, [0, 0], [M, KB], target_memory=pl.MemorySpace.Mat)
        b0 = pl.load(b, [0, 0], [KB, N], target_memory=pl.MemorySpace.Mat)
        acc = pl.matmul(pl.move(a0, target_memory=pl.MemorySpace.Left), pl.move(b0, target_memory=pl.MemorySpace.Right))
        for kb in pl.range(1, K // KB):
            ak = pl.load(a, [0, kb * KB], [M, KB], target_memory=pl.MemorySpace.Mat)
            bk = pl.load(b, [kb * KB, 0], [KB, N], target_memory=pl.MemorySpace.Mat)
            acc = pl.matmul_acc(acc, pl.move(ak, target_memory=pl.MemorySpace.Left),
                                pl.move(bk, target_memory=pl.MemorySpace.Right))
        return pl.store(acc, [0, 0], c)


@pl.program
class MatmulUnrolled:
    """The K loop as pl.unroll (UnrollLoops removes the loop before memory planning)."""

    @pl.function(type=pl.FunctionType.InCore)
    def mm(
        self,
        a: pl.Tensor[[M, K], pl.FP16],
        b: pl.Tensor[[K, N], pl.FP16],
        c: pl.Out[pl.Tensor[[M, N], pl.FP32]],
    ) -> pl.Tensor[[M, N], pl.FP32]:
        a0 = pl.load(a, [0, 0], [M, KB], target_memory=pl.MemorySpace.Mat)
        b0 = pl.load(b, [0, 0], [KB, N], target_memory=pl.MemorySpace.Mat)
        acc = pl.matmul(pl.move(a0, target_memory=pl.MemorySpace.Left), pl.move(b0, target_memory=pl.MemorySpace.Right))
        for kb in pl.unroll(1, 4):
            ak = pl.load(a, [0, kb * KB], [M, KB], target_memory=pl.MemorySpace.Mat)
            bk = pl.load(b, [kb * KB, 0], [KB, N], target_memory=pl.MemorySpace.Mat)
            acc = pl.matmul_acc(acc, pl.move(ak, target_memory=pl.MemorySpace.Left),
                                pl.move(bk, target_memory=pl.MemorySpace.Right))
        return pl.store(acc, [0, 0], c)
