# error: 14: unknown op 'pl.row_sun'
import pypto.language as pl


@pl.program
class Bad:
    @pl.function(type=pl.FunctionType.InCore)
    def k(
        self, x: pl.Tensor[[64, 32], pl.FP32], o: pl.Out[pl.Tensor[[64, 32], pl.FP32]]
    ) -> pl.Tensor[[64, 32], pl.FP32]:
        for r in pl.range(0, 64, 16):
            t = pl.load(x, [r, 0], [16, 32])
            tmp = pl.create_tile([16, 32], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)
            s = pl.row_sun(t, tmp)
            o = pl.store(pl.row_expand_div(t, s), [r, 0], o)
        return o
