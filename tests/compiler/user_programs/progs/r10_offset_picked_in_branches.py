"""Both branches of an orchestration `if` on a host read compute their constant (1.5 * 2.0 and
0.25 + 0.25): values folded at parse time in a branch are still the branch's values after the if."""
import pypto.language as pl


@pl.jit
def offset_by_mode(x: pl.Tensor, mode: pl.Tensor, y: pl.Out[pl.Tensor]):
    m = pl.cast(pl.read(mode, [0, 0]), pl.INDEX)
    if m == 1:
        b = 1.5 * 2.0
    else:
        b = 0.25 + 0.25
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="offset"):
        y[:, :] = pl.adds(x, b)
