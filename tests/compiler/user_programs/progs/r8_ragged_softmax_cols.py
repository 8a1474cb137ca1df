"""Row softmax over only the first `valid` columns of each 64-column row (the ragged-tail idiom of
pypto-jit §7): load with valid_shape, fillpad with -inf, row max, exp, row sum; columns past `valid`
come out 0."""
import pypto.language as pl


@pl.jit
def masked_softmax(x: pl.Tensor, y: pl.Out[pl.Tensor], valid: int):
    rows, cols = x.shape
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="masked_softmax"):
        t = pl.load(x, [0, 0], [rows, cols], valid_shape=[rows, valid])
        t = pl.fillpad(t, pad_value=pl.PadValue.min)
        tmp = pl.create_tile([rows, cols], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)
        m = pl.row_max(t, tmp)
        e = pl.exp(pl.row_expand_sub(t, m))
        s = pl.row_sum(e, tmp)
        pl.store(pl.row_expand_div(e, s), [0, 0], y)
