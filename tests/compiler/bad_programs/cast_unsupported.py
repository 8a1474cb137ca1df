# error: 10: cast: FP16 tiles cannot be converted to BF16 (supported: FP32, INT32, INT16, INT8, UINT8)
import pypto.language as pl


@pl.program
class Bad:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 64], pl.FP16], o: pl.Out[pl.Tensor[[16, 64], pl.BF16]]) -> pl.Tensor[[16, 64], pl.BF16]:
        t = pl.load(a, [0, 0], [16, 64])
        u = pl.cast(t, pl.BF16, mode="floor")
        return pl.store(u, [0, 0], o)
