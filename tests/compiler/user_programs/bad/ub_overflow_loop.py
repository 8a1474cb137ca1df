# error: 14: memory space Vec overflows: tile 'u' needs 131072 bytes
# compile: yes
import pypto.language as pl


@pl.program
class Bad:
    @pl.function(type=pl.FunctionType.InCore)
    def k(
        self, x: pl.Tensor[[512, 128], pl.FP32], o: pl.Out[pl.Tensor[[512, 128], pl.FP32]]
    ) -> pl.Tensor[[512, 128], pl.FP32]:
        for r in pl.range(0, 512, 256):
            t = pl.load(x, [r, 0], [256, 128])
            u = pl.exp(t)
            v = pl.add(t, u)
            o = pl.store(v, [r, 0], o)
        return o
