"""Red team 14 programs: PyPTO written from pypto-jit.md alone, the way upstream and pypto-lib users
write them (the docstring of each function says what it computes)."""
import pypto.language as pl


@pl.jit
def count_read_in_kernel(x: pl.Tensor, cnt: pl.Tensor, y: pl.Out[pl.Tensor]):
    """The kernel reads how many 8-row blocks of x [32, 16] to add one to from cnt [1, 1] int32 and
    loops over that INT32 count itself (the rest of y is left as the caller passed it)."""
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="plus_one_n"):
        n = pl.read(cnt, [0, 0])
        for i in pl.range(n):
            t = pl.load(x, [i * 8, 0], [8, 16])
            pl.store(pl.adds(t, 1.0), [i * 8, 0], y)
