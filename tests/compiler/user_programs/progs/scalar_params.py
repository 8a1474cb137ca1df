"""pl.Scalar parameters in tile-scalar ops and scalar arithmetic, passed through orchestration.

y = max((x * alpha + beta) / (alpha * 2.0), floor) ; alpha, beta, floor are FP32 scalars.
"""

import pypto.language as pl

R, C = 32, 32


@pl.program
class ScalarParams:
    @pl.function(type=pl.FunctionType.InCore)
    def affine(
        self,
        x: pl.Tensor[[R, C], pl.FP32],
        alpha: pl.Scalar[pl.FP32],
        beta: pl.Scalar[pl.FP32],
        floor: pl.Scalar[pl.FP32],
        y: pl.Out[pl.Tensor[[R, C], pl.FP32]],
    ) -> pl.Tensor[[R, C], pl.FP32]:
        t = pl.load(x, [0, 0], [R, C])
        u = pl.add(pl.mul(t, alpha), beta)
        two_a = alpha * 2.0
        v = pl.div(u, two_a)
        w = pl.maxs(v, floor)
        return pl.store(w, [0, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self, x: pl.Tensor[[R, C], pl.FP32], alpha: pl.Scalar[pl.FP32], beta: pl.Scalar[pl.FP32]
    ) -> pl.Tensor[[R, C], pl.FP32]:
        y: pl.Tensor[[R, C], pl.FP32] = pl.create_tensor([R, C], dtype=pl.FP32)
        y = self.affine(x, alpha, beta - 1.0, -0.5, y)
        return y
