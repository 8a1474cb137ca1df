"""An InCore kernel written with tensor-level ops only (ConvertTensorToBlockOps loads the params,
converts the ops and adds the Out parameter): z = exp(a - b) * 0.5 + a."""

import pypto.language as pl

R, C = 32, 64


@pl.program
class TensorOps:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[R, C], pl.FP32], b: pl.Tensor[[R, C], pl.FP32]) -> pl.Tensor[[R, C], pl.FP32]:
        d = pl.sub(a, b)
        e = pl.exp(d)
        h = pl.mul(e, 0.5)
        z = pl.add(h, a)
        return z

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[R, C], pl.FP32], b: pl.Tensor[[R, C], pl.FP32]) -> pl.Tensor[[R, C], pl.FP32]:
        z = self.k(a, b)
        return z
