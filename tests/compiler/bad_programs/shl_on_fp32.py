# error: 11: shl: FP32 tiles are not supported (supported: INT8, INT16, INT32, UINT8, UINT16, UINT32)
import pypto.language as pl


@pl.program
class Bad:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 64], pl.FP32], o: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        t = pl.load(a, [0, 0], [16, 64])
        s = pl.load(a, [0, 0], [16, 64])
        u = pl.shl(t, s)
        return pl.store(u, [0, 0], o)
