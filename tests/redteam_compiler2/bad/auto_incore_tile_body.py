# error: 11: auto_incore
# xfail: pl.auto_incore is not implemented; the error is 'ScopeStmt is not supported by the PTO backend'
import pypto.language as pl


@pl.program
class Bad:
    @pl.function
    def main(self, x: pl.Tensor[[128, 32], pl.FP32], out: pl.Out[pl.Tensor[[128, 32], pl.FP32]]
             ) -> pl.Tensor[[128, 32], pl.FP32]:
        with pl.auto_incore():
            for i in pl.parallel(0, 8, 1, chunk=4):
                t = pl.load(x, [i * 16, 0], [16, 32])
                u = pl.add(t, 1.0)
                out = pl.store(u, [i * 16, 0], out)
        return out
