"""Dynamic row count: tensors [M, 64] with M = pl.dynamic("M"); the kernel loops over pl.tensor.dim(x, 0)."""

import pypto.language as pl

M = pl.dynamic("M")
C, BLK = 64, 16


@pl.program
class DynamicRows:
    @pl.function(type=pl.FunctionType.InCore)
    def sq(self, x: pl.Tensor[[M, C], pl.FP32], y: pl.Out[pl.Tensor[[M, C], pl.FP32]]) -> pl.Tensor[[M, C], pl.FP32]:
        rows = pl.tensor.dim(x, 0)
        for r in pl.range(0, rows, BLK):
            t = pl.load(x, [r, 0], [BLK, C])
            u = pl.mul(t, t)
            y = pl.store(u, [r, 0], y)
        return y


@pl.program
class DynamicOrch:
    @pl.function(type=pl.FunctionType.InCore)
    def sq(self, x: pl.Tensor[[M, C], pl.FP32], y: pl.Out[pl.Tensor[[M, C], pl.FP32]]) -> pl.Tensor[[M, C], pl.FP32]:
        rows = pl.tensor.dim(x, 0)
        for r in pl.range(0, rows, BLK):
            t = pl.load(x, [r, 0], [BLK, C])
            u = pl.mul(t, t)
            y = pl.store(u, [r, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[M, C], pl.FP32]) -> pl.Tensor[[M, C], pl.FP32]:
        y = pl.create_tensor([pl.tensor.dim(x, 0), C], dtype=pl.FP32)
        y = self.sq(x, y)
        return y


@pl.program
class DynamicTail:
    """Row count not a multiple of BLK: the last block is loaded with a dynamic valid_shapes."""

    @pl.function(type=pl.FunctionType.InCore)
    def plus1(self, x: pl.Tensor[[M, C], pl.FP32], y: pl.Out[pl.Tensor[[M, C], pl.FP32]]) -> pl.Tensor[[M, C], pl.FP32]:
        rows = pl.tensor.dim(x, 0)
        for r in pl.range(0, rows, BLK):
            valid = pl.min(rows - r, BLK)
            t = pl.load(x, [r, 0], [BLK, C], valid_shapes=[valid, C])
            u = pl.add(t, 1.0)
            y = pl.store(u, [r, 0], y)
        return y
