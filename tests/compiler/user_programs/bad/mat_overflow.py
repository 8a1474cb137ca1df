# error: 16: memory space Mat overflows
import pypto.language as pl


@pl.program
class Bad:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[64, 128], pl.FP32], b: pl.Tensor[[128, 64], pl.FP32],
          big: pl.Tensor[[512, 512], pl.FP32], c: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        am = pl.load(a, [0, 0], [64, 128], target_memory=pl.MemorySpace.Mat)
        bm = pl.load(b, [0, 0], [128, 64], target_memory=pl.MemorySpace.Mat)
        al = pl.move(am, target_memory=pl.MemorySpace.Left)
        br = pl.move(bm, target_memory=pl.MemorySpace.Right)
        acc = pl.matmul(al, br)
        back = pl.move(acc, target_memory=pl.MemorySpace.Mat)  # noqa: F841
        w = pl.load(big, [0, 0], [512, 512], target_memory=pl.MemorySpace.Mat)  # noqa: F841
        return pl.store(acc, [0, 0], c)
