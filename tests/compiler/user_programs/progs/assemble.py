"""pl.assemble in orchestration code (spec §1.1, §4.2): its own file, since parsing it fails."""

import pypto.language as pl


@pl.program
class Assemble:
    """The same computation written with pl.assemble (spec §1.1, §4.2)."""

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
            part = pl.create_tensor([16, 32], dtype=pl.FP32)
            part = self.scale(v, s, part)
            out = pl.assemble(out, part, [i * 16, 0])
        return out
