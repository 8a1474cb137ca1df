"""Programs for the loop, layout, valid-shape and promotion fixes (tests/compiler/test_fixes.py)."""

import pypto.language as pl

N = pl.dynamic("N")


@pl.program
class LeftTransposed:
    """c = at.T @ b with FP32 operands: the left operand comes from a transposed move."""

    @pl.function(type=pl.FunctionType.InCore)
    def k(
        self, at: pl.Tensor[[32, 16], pl.FP32], b: pl.Tensor[[32, 16], pl.FP32],
        c: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
    ) -> pl.Tensor[[16, 16], pl.FP32]:
        am = pl.load(at, [0, 0], [32, 16], target_memory=pl.MemorySpace.Mat)
        bm = pl.load(b, [0, 0], [32, 16], target_memory=pl.MemorySpace.Mat)
        al = pl.move(am, target_memory=pl.MemorySpace.Left, transpose=True)
        br = pl.move(bm, target_memory=pl.MemorySpace.Right)
        return pl.store(pl.matmul(al, br), [0, 0], c)


@pl.program
class VecTransposed:
    """y = x.T + 1 through a transposed Vec -> Vec move."""

    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 32], pl.FP32], y: pl.Out[pl.Tensor[[32, 16], pl.FP32]]) -> pl.Tensor[[32, 16], pl.FP32]:
        t = pl.load(x, [0, 0], [16, 32])
        u = pl.move(t, target_memory=pl.MemorySpace.Vec, transpose=True)
        return pl.store(pl.add(u, 1.0), [0, 0], y)


@pl.program
class NestedKLoop:
    """Accumulator carried through two nested loops (outer over K halves, inner over K slices)."""

    @pl.function(type=pl.FunctionType.InCore)
    def k(
        self, a: pl.Tensor[[16, 128], pl.FP16], b: pl.Tensor[[128, 32], pl.FP16],
        c: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
    ) -> pl.Tensor[[16, 32], pl.FP32]:
        a0 = pl.load(a, [0, 0], [16, 32], target_memory=pl.MemorySpace.Mat)
        b0 = pl.load(b, [0, 0], [32, 32], target_memory=pl.MemorySpace.Mat)
        acc = pl.matmul(pl.move(a0, target_memory=pl.MemorySpace.Left), pl.move(b0, target_memory=pl.MemorySpace.Right))
        for h in pl.range(0, 2):
            for s in pl.range(0, 2):
                kb = h * 2 + s
                if kb > 0:
                    ak = pl.load(a, [0, kb * 32], [16, 32], target_memory=pl.MemorySpace.Mat)
                    bk = pl.load(b, [kb * 32, 0], [32, 32], target_memory=pl.MemorySpace.Mat)
                    acc = pl.matmul_acc(acc, pl.move(ak, target_memory=pl.MemorySpace.Left),
                                        pl.move(bk, target_memory=pl.MemorySpace.Right))
        return pl.store(acc, [0, 0], c)


@pl.program
class AccReadAfterNext:
    """Invalid: the old accumulator is still read after the next one is computed (no Acc copy exists)."""

    @pl.function(type=pl.FunctionType.InCore)
    def k(
        self, a: pl.Tensor[[16, 32], pl.FP16], b: pl.Tensor[[32, 32], pl.FP16],
        c: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
    ) -> pl.Tensor[[16, 32], pl.FP32]:
        al = pl.move(pl.load(a, [0, 0], [16, 32], target_memory=pl.MemorySpace.Mat), target_memory=pl.MemorySpace.Left)
        br = pl.move(pl.load(b, [0, 0], [32, 32], target_memory=pl.MemorySpace.Mat), target_memory=pl.MemorySpace.Right)
        acc0 = pl.matmul(al, br)
        for _i, (acc, _last) in pl.range(0, 2, init_values=(acc0, acc0)):
            nxt = pl.matmul_acc(acc, al, br)
            prev = pl.add(acc, 0)
            n2, _p2 = pl.yield_(nxt, prev)
        return pl.store(n2, [0, 0], c)


@pl.program
class DimValid:
    """valid_shapes from pl.tensor.dim: one [16, 32] tile holding the first n <= 16 rows."""

    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[N, 32], pl.FP32], y: pl.Out[pl.Tensor[[N, 32], pl.FP32]]) -> pl.Tensor[[N, 32], pl.FP32]:
        n = pl.tensor.dim(x, 0)
        t = pl.load(x, [0, 0], [16, 32], valid_shapes=[n, 32])
        return pl.store(pl.mul(t, 2.0), [0, 0], y)


@pl.program
class CountDown:
    """A negative-step loop with run-time bounds: y block b = x block b * (b + 1), b = hi-1 .. lo."""

    @pl.function(type=pl.FunctionType.InCore)
    def k(
        self, x: pl.Tensor[[64, 32], pl.FP32], lo: pl.Scalar[pl.INDEX], hi: pl.Scalar[pl.INDEX],
        y: pl.InOut[pl.Tensor[[64, 32], pl.FP32]],
    ) -> pl.Tensor[[64, 32], pl.FP32]:
        for b in pl.range(hi - 1, lo - 1, -1):
            t = pl.load(x, [b * 16, 0], [16, 32])
            f = pl.cast(b + 1, pl.FP32)
            y = pl.store(pl.mul(t, f), [b * 16, 0], y)
        return y


@pl.program
class WhileTwoScalars:
    """A natural while over two scalars and a tile: y = x * 2**k with k the trips until i + j >= 5."""

    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 32], pl.FP32], y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        t = pl.load(x, [0, 0], [16, 32])
        i = 0
        j = 0
        while i + j < 5:
            t = pl.add(t, t)
            i = i + 1
            j = j + 1
        return pl.store(t, [0, 0], y)


@pl.program
class MixedPrecision:
    """FP16 tile + FP32 tile promotes to FP32; FP16 tile * pl.const(.., FP16) stays FP16."""

    @pl.function(type=pl.FunctionType.InCore)
    def k(
        self, a: pl.Tensor[[16, 32], pl.FP16], b: pl.Tensor[[16, 32], pl.FP32],
        y: pl.Out[pl.Tensor[[16, 32], pl.FP32]], z: pl.Out[pl.Tensor[[16, 32], pl.FP16]],
    ) -> tuple[pl.Tensor[[16, 32], pl.FP32], pl.Tensor[[16, 32], pl.FP16]]:
        ta = pl.load(a, [0, 0], [16, 32])
        tb = pl.load(b, [0, 0], [16, 32])
        y2 = pl.store(pl.add(ta, tb), [0, 0], y)
        z2 = pl.store(pl.mul(ta, pl.const(0.5, pl.FP16)), [0, 0], z)
        return y2, z2
