"""Programs that reach the library through ``pl.<name>`` the way users write them."""

import pypto.language as pl

R, C = 37, 130


@pl.program
class InCoreKernel:
    """Library calls in an InCore function, chained: relu(softmax(x)) * gamma + mean(x) over rows."""

    @pl.function(type=pl.FunctionType.InCore)
    def kern(self, x: pl.Tensor[[R, C], pl.FP32], g: pl.Tensor[[C], pl.FP32]) -> pl.Tensor[[R, C], pl.FP32]:
        s = pl.softmax(x)
        r = pl.relu(s)
        y = pl.mul(r, g)
        m = pl.mean(x, -1, keepdim=True)
        z = pl.add(y, m)
        return z

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[R, C], pl.FP32], g: pl.Tensor[[C], pl.FP32]) -> pl.Tensor[[R, C], pl.FP32]:
        z = self.kern(x, g)
        return z


@pl.program
class IncoreScope:
    """Library calls inside `with pl.incore():` in an Opaque function (outlined into a kernel)."""

    @pl.function
    def main(self, x: pl.Tensor[[R, C], pl.FP32], w: pl.Tensor[[C], pl.FP32]) -> pl.Tensor[[R, C], pl.FP32]:
        with pl.incore():
            y = pl.rms_norm(x, w, eps=1e-6)
            z = pl.sigmoid(y)
        return z


M = pl.dynamic("M")


@pl.program
class DynamicRows:
    """The InCoreKernel chain on a run-time row count: relu(softmax(x)) * gamma + mean(x) over rows."""

    @pl.function(type=pl.FunctionType.InCore)
    def kern(self, x: pl.Tensor[[M, C], pl.FP32], g: pl.Tensor[[C], pl.FP32]) -> pl.Tensor[[M, C], pl.FP32]:
        s = pl.softmax(x)
        r = pl.relu(s)
        y = pl.mul(r, g)
        m = pl.mean(x, -1, keepdim=True)
        z = pl.add(y, m)
        return z

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[M, C], pl.FP32], g: pl.Tensor[[C], pl.FP32]) -> pl.Tensor[[M, C], pl.FP32]:
        z = self.kern(x, g)
        return z
