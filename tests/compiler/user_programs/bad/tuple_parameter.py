# error: 9: parameter 'n'
# fixed (was a strict xfail): a tuple parameter type is rejected with internal reprs ('ScalarAnnotation(dtype=<DataType.INDEX: 21>)')
import pypto.language as pl


@pl.program
class Bad:
    @pl.function(type=pl.FunctionType.Orchestration)
    def k(self, n: tuple[pl.Scalar[pl.INDEX], pl.Scalar[pl.INDEX]]) -> pl.Scalar[pl.INDEX]:
        return n
