# error: 11: sel: 'mask' must be a UINT8 predicate tile of shape [16, 32] (the result of cmp/cmps on [16, 64] data), got FP32 [16, 64]
import pypto.language as pl


@pl.program
class Bad:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 64], pl.FP32], o: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        t = pl.load(a, [0, 0], [16, 64])
        s = pl.load(a, [0, 0], [16, 64])
        u = pl.sel(t, t, s)
        return pl.store(u, [0, 0], o)
