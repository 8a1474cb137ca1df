"""Broadcasting binary ops in kernels: each form the expand-op lowering takes (lib/broadcast.py)."""

import pypto.language as pl


@pl.program
class TileForms:
    """Vectors on the left of non-commutative ops and maximum: the 'expand first' paths."""

    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 32], pl.FP32], r: pl.Tensor[[1, 32], pl.FP32], c: pl.Tensor[[16, 1], pl.FP32],
          o1: pl.Out[pl.Tensor[[16, 32], pl.FP32]], o2: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
          o3: pl.Out[pl.Tensor[[16, 32], pl.FP32]], o4: pl.Out[pl.Tensor[[16, 32], pl.FP32]]
          ) -> tuple[pl.Tensor[[16, 32], pl.FP32], pl.Tensor[[16, 32], pl.FP32], pl.Tensor[[16, 32], pl.FP32],
                     pl.Tensor[[16, 32], pl.FP32]]:
        tx = pl.load(x, [0, 0], [16, 32])
        tr = pl.load(r, [0, 0], [1, 32])
        tc = pl.load(c, [0, 0], [16, 1])
        a = pl.store(pl.sub(tr, tx), [0, 0], o1)
        b = pl.store(pl.maximum(tx, tc), [0, 0], o2)
        d = pl.store(pl.div(tc, tx), [0, 0], o3)
        e = pl.store(pl.sub(tc, tr), [0, 0], o4)
        return a, b, d, e


@pl.program
class TensorForms:
    """Tensor-level [1, N] - [M, N] and [M, 1] * [1, N] (outer product) in one kernel."""

    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[32, 64], pl.FP32], r: pl.Tensor[[1, 64], pl.FP32], c: pl.Tensor[[32, 1], pl.FP32]
          ) -> tuple[pl.Tensor[[32, 64], pl.FP32], pl.Tensor[[32, 64], pl.FP32]]:
        a = pl.sub(r, x)
        b = pl.mul(c, r)
        return a, b

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[32, 64], pl.FP32], r: pl.Tensor[[1, 64], pl.FP32], c: pl.Tensor[[32, 1], pl.FP32]
             ) -> tuple[pl.Tensor[[32, 64], pl.FP32], pl.Tensor[[32, 64], pl.FP32]]:
        a, b = self.k(x, r, c)
        return a, b
