"""Programs for the UnrollLoops / OutlineIncoreScopes / ConvertTensorToBlockOps tests."""

import pypto.language as pl


@pl.program
class Add100x96:
    """Tensor-level add too big for one 32 KiB tile: an 80-row block plus a 20-row tail."""

    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[100, 96], pl.FP32], b: pl.Tensor[[100, 96], pl.FP32]) -> pl.Tensor[[100, 96], pl.FP32]:
        z = pl.add(a, b)
        return z

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[100, 96], pl.FP32], b: pl.Tensor[[100, 96], pl.FP32]) -> pl.Tensor[[100, 96], pl.FP32]:
        z = self.k(a, b)
        return z


@pl.program
class Chain200:
    """A looped row grid (two full 80-row blocks) plus a tail; maximum and a scalar op fused in."""

    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[200, 96], pl.FP32], b: pl.Tensor[[200, 96], pl.FP32]) -> pl.Tensor[[200, 96], pl.FP32]:
        s = pl.add(a, b)
        z = pl.maximum(pl.mul(s, 0.5), a)
        return z

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[200, 96], pl.FP32], b: pl.Tensor[[200, 96], pl.FP32]) -> pl.Tensor[[200, 96], pl.FP32]:
        z = self.k(a, b)
        return z


@pl.program
class WideCast:
    """Rows too wide for a tile: column blocks with a 4-column tail, then an FP16 cast."""

    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[20, 4100], pl.FP32]) -> pl.Tensor[[20, 4100], pl.FP16]:
        z = pl.cast(pl.mul(a, 3.0), pl.FP16)
        return z

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[20, 4100], pl.FP32]) -> pl.Tensor[[20, 4100], pl.FP16]:
        z = self.k(a)
        return z


@pl.program
class TensorSoftmax:
    """Row softmax with tensor ops; 100 columns (400 bytes) are padded to 104 with valid shapes."""

    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[100, 100], pl.FP32]) -> pl.Tensor[[100, 100], pl.FP32]:
        m = pl.row_max(x)
        e = pl.exp(pl.sub(x, m))
        y = pl.div(e, pl.row_sum(e))
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[100, 100], pl.FP32]) -> pl.Tensor[[100, 100], pl.FP32]:
        y = self.k(x)
        return y


@pl.program
class RowVectors:
    """A row-vector result and a row-vector input broadcast on the left of a mul."""

    @pl.function(type=pl.FunctionType.InCore)
    def k(
        self, x: pl.Tensor[[40, 64], pl.FP32], bias: pl.Tensor[[40, 1], pl.FP32]
    ) -> tuple[pl.Tensor[[40, 1], pl.FP32], pl.Tensor[[40, 64], pl.FP32]]:
        t = pl.add(pl.row_sum(x), bias)
        y = pl.mul(bias, x)
        return t, y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self, x: pl.Tensor[[40, 64], pl.FP32], bias: pl.Tensor[[40, 1], pl.FP32]
    ) -> tuple[pl.Tensor[[40, 1], pl.FP32], pl.Tensor[[40, 64], pl.FP32]]:
        t, y = self.k(x, bias)
        return t, y


@pl.program
class TensorMatmul:
    """Tensor-level matmul with a transposed right operand (a cube kernel)."""

    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[64, 32], pl.FP32], b: pl.Tensor[[64, 32], pl.FP32]) -> pl.Tensor[[64, 64], pl.FP32]:
        c = pl.matmul(a, b, b_trans=True)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[64, 32], pl.FP32], b: pl.Tensor[[64, 32], pl.FP32]) -> pl.Tensor[[64, 64], pl.FP32]:
        c = self.k(a, b)
        return c


@pl.program
class ScopeInOut:
    """A `with pl.incore():` region with an input (x), an inout (acc) and an output (y)."""

    @pl.function
    def main(
        self, x: pl.Tensor[[32, 64], pl.FP32], acc: pl.Tensor[[32, 64], pl.FP32]
    ) -> tuple[pl.Tensor[[32, 64], pl.FP32], pl.Tensor[[32, 64], pl.FP32]]:
        y: pl.Tensor[[32, 64], pl.FP32] = pl.create_tensor([32, 64], dtype=pl.FP32)
        with pl.incore():
            tx = pl.load(x, [0, 0], [32, 64])
            ta = pl.load(acc, [0, 0], [32, 64])
            acc2 = pl.store(pl.add(ta, tx), [0, 0], acc)
            y2 = pl.store(pl.mul(tx, 2.0), [0, 0], y)
        return acc2, y2


@pl.program
class ScopeTensorOpsInLoop:
    """Scopes in a host loop, written with tensor ops: outlined, then converted (y += 2 * x, twice)."""

    @pl.function
    def main(self, x: pl.Tensor[[64, 64], pl.FP32], y: pl.Tensor[[64, 64], pl.FP32]) -> pl.Tensor[[64, 64], pl.FP32]:
        for i in pl.range(2):  # noqa: B007 (the DSL loop variable is the generated code's name)
            with pl.incore():
                z = pl.add(pl.mul(x, 2.0), y)
            y = z
        return y


@pl.program
class ScopeTileEscapes:
    @pl.function
    def main(self, x: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
        with pl.incore():
            t = pl.load(x, [0, 0], [16, 16])
        y = pl.add(x, x)
        with pl.incore():
            u = pl.store(t, [0, 0], y)
        return u


@pl.program
class UnrollSum:
    """pl.unroll with a carried tile: the four row blocks of x summed."""

    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[64, 32], pl.FP32], o: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        acc = pl.block.full([16, 32], pl.FP32, 0.0)
        for i in pl.unroll(4):
            t = pl.load(x, [i * 16, 0], [16, 32])
            acc = pl.add(acc, t)
        r = pl.store(acc, [0, 0], o)
        return r


@pl.program
class UnrollNested:
    """Nested unrolls with a step and a scalar carried through both: o = sum of x * (1 + j) blocks."""

    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[64, 32], pl.FP32], o: pl.Out[pl.Tensor[[64, 32], pl.FP32]]) -> pl.Tensor[[64, 32], pl.FP32]:
        for i in pl.unroll(0, 4, 2):
            for j in pl.unroll(2):
                t = pl.load(x, [(i + j) * 16, 0], [16, 32])
                o = pl.store(pl.mul(t, 2.0), [(i + j) * 16, 0], o)
        return o
