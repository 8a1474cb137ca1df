# error: 11: unsupported syntax: augmented assignment
import pypto.language as pl


@pl.program
class Bad:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 16], pl.FP32]) -> pl.Scalar[pl.INDEX]:
        n = 0
        for i in pl.range(4):
            n += i
        return n
