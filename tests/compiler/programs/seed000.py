"""The two programs of seed 000 (PTO codegen): vector_add and mul_kernel_2d."""

import pypto.language as pl


@pl.program
class MyKernel:
    @pl.function
    def vector_add(self, a: pl.Tensor[[32, 32], pl.FP32], b: pl.Tensor[[32, 32], pl.FP32]):
        tile_a = pl.load(a, [0, 0], [32, 32])
        tile_b = pl.load(b, [0, 0], [32, 32])
        tile_c = pl.add(tile_a, tile_b)
        pl.store(tile_c, [0, 0], [32, 32], a)


@pl.program
class MulKernel:
    @pl.function
    def mul_kernel_2d(
        self,
        a: pl.Tensor[[32, 32], pl.FP32],
        b: pl.Tensor[[32, 32], pl.FP32],
        c: pl.Tensor[[32, 32], pl.FP32],
    ):
        # Load tiles
        tile_a = pl.load(a, [0, 0], [32, 32])
        tile_b = pl.load(b, [0, 0], [32, 32])

        # Multiply
        tile_c = pl.mul(tile_a, tile_b)

        # Store result
        pl.store(tile_c, [0, 0], [32, 32], c)


@pl.program
class KeywordForms:
    @pl.function(type=pl.FunctionType.InCore)
    def kw(self, a: pl.Tensor[[32, 32], pl.FP32], out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        t = pl.load(a, offsets=[0, 0], shapes=[32, 32], target_memory=pl.MemorySpace.Vec)
        u = pl.mul(t, 2.0)
        r = pl.store(u, offsets=[0, 0], output_tensor=out)
        return r
