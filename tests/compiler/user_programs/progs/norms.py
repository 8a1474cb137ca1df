"""LayerNorm and RMSNorm built from row ops, over 16-row blocks, with gamma/beta applied via col_expand ops."""

import pypto.language as pl

ROWS, D, BLK = 64, 128, 16
EPS = 1e-5


@pl.program
class LayerNorm:
    @pl.function(type=pl.FunctionType.InCore)
    def ln(
        self,
        x: pl.Tensor[[ROWS, D], pl.FP32],
        gamma: pl.Tensor[[1, D], pl.FP32],
        beta: pl.Tensor[[1, D], pl.FP32],
        y: pl.Out[pl.Tensor[[ROWS, D], pl.FP32]],
    ) -> pl.Tensor[[ROWS, D], pl.FP32]:
        g = pl.load(gamma, [0, 0], [1, D])
        b = pl.load(beta, [0, 0], [1, D])
        for r in pl.range(0, ROWS, BLK):
            t = pl.load(x, [r, 0], [BLK, D])
            tmp = pl.create_tile([BLK, D], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)
            mean = pl.mul(pl.row_sum(t, tmp), 1.0 / D)
            xc = pl.row_expand_sub(t, mean)
            var = pl.mul(pl.row_sum(pl.mul(xc, xc), tmp), 1.0 / D)
            inv = pl.rsqrt(pl.add(var, EPS))
            n = pl.row_expand_mul(xc, inv)
            out = pl.add(pl.col_expand_mul(n, g), pl.col_expand(n, b))
            y = pl.store(out, [r, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self, x: pl.Tensor[[ROWS, D], pl.FP32], gamma: pl.Tensor[[1, D], pl.FP32], beta: pl.Tensor[[1, D], pl.FP32]
    ) -> pl.Tensor[[ROWS, D], pl.FP32]:
        y: pl.Tensor[[ROWS, D], pl.FP32] = pl.create_tensor([ROWS, D], dtype=pl.FP32)
        y = self.ln(x, gamma, beta, y)
        return y


@pl.program
class RMSNorm:
    @pl.function(type=pl.FunctionType.InCore)
    def rms(
        self,
        x: pl.Tensor[[ROWS, D], pl.FP32],
        gamma: pl.Tensor[[1, D], pl.FP32],
        y: pl.Out[pl.Tensor[[ROWS, D], pl.FP32]],
    ) -> pl.Tensor[[ROWS, D], pl.FP32]:
        g = pl.load(gamma, [0, 0], [1, D])
        for r in pl.range(0, ROWS, BLK):
            t = pl.load(x, [r, 0], [BLK, D])
            tmp = pl.create_tile([BLK, D], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)
            ms = pl.row_sum(pl.mul(t, t), tmp)
            rinv = pl.rsqrt(pl.adds(pl.muls(ms, 1.0 / D), EPS))
            out = pl.col_expand_mul(pl.row_expand_mul(t, rinv), g)
            y = pl.store(out, [r, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[ROWS, D], pl.FP32], gamma: pl.Tensor[[1, D], pl.FP32]) -> pl.Tensor[[ROWS, D], pl.FP32]:
        y: pl.Tensor[[ROWS, D], pl.FP32] = pl.create_tensor([ROWS, D], dtype=pl.FP32)
        y = self.rms(x, gamma, y)
        return y
