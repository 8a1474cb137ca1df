"""Very small and large tensors, layouts in annotations, broadcasting and promotion."""

import pypto.language as pl


@pl.program
class Tiny:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[1, 8], pl.FP32], o: pl.Out[pl.Tensor[[1, 8], pl.FP32]]) -> pl.Tensor[[1, 8], pl.FP32]:
        t = pl.load(a, [0, 0], [1, 8])
        u = pl.exp(pl.mul(t, 2.0))
        return pl.store(u, [0, 0], o)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[1, 8], pl.FP32]) -> pl.Tensor[[1, 8], pl.FP32]:
        o = pl.create_tensor([1, 8], dtype=pl.FP32)
        o = self.k(a, o)
        return o


@pl.program
class Big:
    """256x256 f32 tensor-level kernel (256 KiB per operand > Vec): ConvertTensorToBlockOps must tile it."""

    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[256, 256], pl.FP32], b: pl.Tensor[[256, 256], pl.FP32]) -> pl.Tensor[[256, 256], pl.FP32]:
        c = pl.add(a, b)
        d = pl.mul(c, 0.5)
        return d

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[256, 256], pl.FP32], b: pl.Tensor[[256, 256], pl.FP32]
             ) -> pl.Tensor[[256, 256], pl.FP32]:
        r = self.k(a, b)
        return r


@pl.program
class Layout:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 32], pl.FP32, pl.ND], o: pl.Out[pl.Tensor[[16, 32], pl.FP32, pl.ND]]
          ) -> pl.Tensor[[16, 32], pl.FP32]:
        t = pl.load(a, [0, 0], [16, 32])
        return pl.store(pl.add(t, 1.0), [0, 0], o)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 32], pl.FP32, pl.ND]) -> pl.Tensor[[16, 32], pl.FP32]:
        o = pl.create_tensor([16, 32], dtype=pl.FP32)
        o = self.k(a, o)
        return o


@pl.program
class LayoutDN:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 32], pl.FP32, pl.DN], o: pl.Out[pl.Tensor[[16, 32], pl.FP32]]
          ) -> pl.Tensor[[16, 32], pl.FP32]:
        t = pl.load(a, [0, 0], [16, 32])
        return pl.store(pl.add(t, 1.0), [0, 0], o)


@pl.program
class ColBcast:
    """Tensor-level [64, 64] - [64, 1] inside a kernel."""

    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[64, 64], pl.FP32], c: pl.Tensor[[64, 1], pl.FP32]) -> pl.Tensor[[64, 64], pl.FP32]:
        s = pl.sub(x, c)
        return s

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 64], pl.FP32], c: pl.Tensor[[64, 1], pl.FP32]) -> pl.Tensor[[64, 64], pl.FP32]:
        s = self.k(x, c)
        return s


@pl.program
class RowBcast:
    """Tensor-level [64, 64] * [1, 64] inside a kernel."""

    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[64, 64], pl.FP32], r: pl.Tensor[[1, 64], pl.FP32]) -> pl.Tensor[[64, 64], pl.FP32]:
        s = pl.mul(x, r)
        return s

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 64], pl.FP32], r: pl.Tensor[[1, 64], pl.FP32]) -> pl.Tensor[[64, 64], pl.FP32]:
        s = self.k(x, r)
        return s


@pl.program
class OuterAdd:
    """Tensor-level [64, 1] + [1, 64] -> [64, 64] inside a kernel."""

    @pl.function(type=pl.FunctionType.InCore)
    def k(self, c: pl.Tensor[[64, 1], pl.FP32], r: pl.Tensor[[1, 64], pl.FP32]) -> pl.Tensor[[64, 64], pl.FP32]:
        s = pl.add(c, r)
        return s

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, c: pl.Tensor[[64, 1], pl.FP32], r: pl.Tensor[[1, 64], pl.FP32]) -> pl.Tensor[[64, 64], pl.FP32]:
        s = self.k(c, r)
        return s


@pl.program
class TileRowBcast:
    """Tile-level block.add of [16, 32] and [1, 32] (tile x tile deduction broadcasts, spec §4.3)."""

    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 32], pl.FP32], r: pl.Tensor[[1, 32], pl.FP32],
          o: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        tx = pl.load(x, [0, 0], [16, 32])
        tr = pl.load(r, [0, 0], [1, 32])
        return pl.store(pl.add(tx, tr), [0, 0], o)


@pl.program
class TileColExpandMul:
    """The explicit spelling of the row broadcast: col_expand_mul with a [1, N] vector."""

    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 32], pl.FP32], r: pl.Tensor[[1, 32], pl.FP32],
          o: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        tx = pl.load(x, [0, 0], [16, 32])
        tr = pl.load(r, [0, 0], [1, 32])
        return pl.store(pl.col_expand_mul(tx, tr), [0, 0], o)


@pl.program
class IntFloatPromote:
    """INT32 + FP32 tensors -> FP32 (spec §2.1)."""

    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 32], pl.INT32], b: pl.Tensor[[16, 32], pl.FP32]) -> pl.Tensor[[16, 32], pl.FP32]:
        s = pl.add(a, b)
        return s

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 32], pl.INT32], b: pl.Tensor[[16, 32], pl.FP32]) -> pl.Tensor[[16, 32], pl.FP32]:
        s = self.k(a, b)
        return s


@pl.program
class UIntIntPromote:
    """UINT32 + INT32 tensors -> INT32 (spec §2.1)."""

    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 32], pl.UINT32], b: pl.Tensor[[16, 32], pl.INT32]) -> pl.Tensor[[16, 32], pl.INT32]:
        s = pl.add(a, b)
        return s

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 32], pl.UINT32], b: pl.Tensor[[16, 32], pl.INT32]
             ) -> pl.Tensor[[16, 32], pl.INT32]:
        s = self.k(a, b)
        return s
