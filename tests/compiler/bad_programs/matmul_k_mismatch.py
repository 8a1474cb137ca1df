# error: 19: matmul: K dims differ: lhs is [32, 64], rhs is [32, 32]
import pypto.language as pl


@pl.program
class Bad:
    @pl.function(type=pl.FunctionType.InCore)
    def k(
        self,
        a: pl.Tensor[[32, 64], pl.FP16],
        b: pl.Tensor[[32, 32], pl.FP16],
        c: pl.Out[pl.Tensor[[32, 32], pl.FP32]],
    ) -> pl.Tensor[[32, 32], pl.FP32]:
        a_m = pl.load(a, [0, 0], [32, 64], target_memory=pl.MemorySpace.Mat)
        b_m = pl.load(b, [0, 0], [32, 32], target_memory=pl.MemorySpace.Mat)
        a_l = pl.move(a_m, target_memory=pl.MemorySpace.Left)
        b_r = pl.move(b_m, target_memory=pl.MemorySpace.Right)
        # K = 64 on the left, 32 on the right
        acc = pl.matmul(a_l, b_r)
        return pl.store(acc, [0, 0], c)
