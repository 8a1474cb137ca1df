# error: 12: chunked loop inside `with pl.auto_incore():` needs constant bounds
import pypto.language as pl


@pl.program
class Bad:
    @pl.function
    def main(self, x: pl.Tensor[[128, 32], pl.FP32], out: pl.Out[pl.Tensor[[128, 32], pl.FP32]]
             ) -> pl.Tensor[[128, 32], pl.FP32]:
        n = pl.tensor.dim(x, 0) // 16
        with pl.auto_incore():
            for i in pl.parallel(0, n, 1, chunk=4):
                t = pl.load(x, [i * 16, 0], [16, 32])
                u = pl.add(t, 1.0)
                out = pl.store(u, [i * 16, 0], out)
        return out
