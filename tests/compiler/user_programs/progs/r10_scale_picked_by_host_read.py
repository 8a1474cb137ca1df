"""A host read picks the scale of a region: mode[0, 0] > 0 scales x by 2.0, otherwise by -1.0. The scale
is bound in both branches of an orchestration `if` on a run-time value (an implicit merge, pypto-jit
§2.3), once as a plain literal and once as a negated one, and read by the region after the if."""
import pypto.language as pl


@pl.jit
def scale_by_mode(x: pl.Tensor, mode: pl.Tensor, y: pl.Out[pl.Tensor]):
    m = pl.cast(pl.read(mode, [0, 0]), pl.INDEX)
    if m > 0:
        s = 2.0
    else:
        s = -1.0
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="scale"):
        y[:, :] = pl.muls(x, s)
