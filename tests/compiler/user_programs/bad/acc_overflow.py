# error: 14: memory space Acc overflows
import pypto.language as pl


@pl.program
class Bad:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[256, 16], pl.FP16], b: pl.Tensor[[16, 256], pl.FP16],
          c: pl.Out[pl.Tensor[[256, 256], pl.FP32]]) -> pl.Tensor[[256, 256], pl.FP32]:
        am = pl.load(a, [0, 0], [256, 16], target_memory=pl.MemorySpace.Mat)
        bm = pl.load(b, [0, 0], [16, 256], target_memory=pl.MemorySpace.Mat)
        al = pl.move(am, target_memory=pl.MemorySpace.Left)
        br = pl.move(bm, target_memory=pl.MemorySpace.Right)
        acc = pl.matmul(al, br)
        return pl.store(acc, [0, 0], c)
