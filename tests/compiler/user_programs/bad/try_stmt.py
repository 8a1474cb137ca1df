# error: 11: unsupported syntax: 'try'
import pypto.language as pl


@pl.program
class Bad:
    @pl.function(type=pl.FunctionType.InCore)
    def k(
        self, x: pl.Tensor[[64, 32], pl.FP32], o: pl.Out[pl.Tensor[[64, 32], pl.FP32]]
    ) -> pl.Tensor[[64, 32], pl.FP32]:
        try:
            t = pl.load(x, [0, 0], [64, 32])
        except Exception:  # noqa: BLE001
            t = pl.load(x, [0, 0], [64, 32])
        return pl.store(t, [0, 0], o)
