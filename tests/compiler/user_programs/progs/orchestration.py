"""Orchestration code: views, reads, create_tensor, assemble, InOut threaded through two calls."""

import pypto.language as pl


@pl.program
class ViewReadScale:
    """out[16i:16i+16] = x[16i:16i+16] * f[0, i] through views of both tensors and tensor.read."""

    @pl.function(type=pl.FunctionType.InCore)
    def scale(self, x: pl.Tensor[[16, 32], pl.FP32], s: pl.Scalar[pl.FP32],
              o: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        t = pl.load(x, [0, 0], [16, 32])
        u = pl.mul(t, s)
        return pl.store(u, [0, 0], o)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 32], pl.FP32], f: pl.Tensor[[1, 4], pl.FP32]) -> pl.Tensor[[64, 32], pl.FP32]:
        out = pl.create_tensor([64, 32], dtype=pl.FP32)
        for i in pl.range(4):
            v = pl.tensor.view(x, [16, 32], [i * 16, 0])
            s = pl.tensor.read(f, [0, i])
            part = pl.tensor.view(out, [16, 32], [i * 16, 0])
            part = self.scale(v, s, part)
        return out


@pl.program
class InOutTwice:
    """acc += x; acc += y through a pl.InOut kernel parameter, called twice from orchestration."""

    @pl.function(type=pl.FunctionType.InCore)
    def acc_add(self, x: pl.Tensor[[16, 32], pl.FP32],
                acc: pl.InOut[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        a = pl.load(acc, [0, 0], [16, 32])
        t = pl.load(x, [0, 0], [16, 32])
        s = pl.add(a, t)
        return pl.store(s, [0, 0], acc)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 32], pl.FP32], y: pl.Tensor[[16, 32], pl.FP32],
             acc: pl.InOut[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        acc = self.acc_add(x, acc)
        acc = self.acc_add(y, acc)
        return acc


@pl.program
class FourOuts:
    """One kernel with four Out parameters; orchestration returns three of them."""

    @pl.function(type=pl.FunctionType.InCore)
    def k4(self, a: pl.Tensor[[16, 32], pl.FP32], b: pl.Tensor[[16, 32], pl.FP32],
           o1: pl.Out[pl.Tensor[[16, 32], pl.FP32]], o2: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
           o3: pl.Out[pl.Tensor[[16, 32], pl.FP32]], o4: pl.Out[pl.Tensor[[16, 32], pl.FP32]]
           ) -> tuple[pl.Tensor[[16, 32], pl.FP32], pl.Tensor[[16, 32], pl.FP32], pl.Tensor[[16, 32], pl.FP32],
                      pl.Tensor[[16, 32], pl.FP32]]:
        ta = pl.load(a, [0, 0], [16, 32])
        tb = pl.load(b, [0, 0], [16, 32])
        r1 = pl.store(pl.add(ta, tb), [0, 0], o1)
        r2 = pl.store(pl.sub(ta, tb), [0, 0], o2)
        r3 = pl.store(pl.mul(ta, tb), [0, 0], o3)
        r4 = pl.store(pl.maximum(ta, tb), [0, 0], o4)
        return r1, r2, r3, r4

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 32], pl.FP32], b: pl.Tensor[[16, 32], pl.FP32]
             ) -> tuple[pl.Tensor[[16, 32], pl.FP32], pl.Tensor[[16, 32], pl.FP32], pl.Tensor[[16, 32], pl.FP32]]:
        o1 = pl.create_tensor([16, 32], dtype=pl.FP32)
        o2 = pl.create_tensor([16, 32], dtype=pl.FP32)
        o3 = pl.create_tensor([16, 32], dtype=pl.FP32)
        o4 = pl.create_tensor([16, 32], dtype=pl.FP32)
        o1, o2, o3, o4 = self.k4(a, b, o1, o2, o3, o4)
        return o1, o3, o4
