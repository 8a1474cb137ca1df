"""Red team 11 mistakes in PyPTO programs (pypto-jit.md): each function holds one; calling it must
raise a PyptoError located at the user's line, never a traceback of the compiler."""
import pypto.language as pl


@pl.jit
def slice_assign_wrong_window(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="wrong_window"):
        t = pl.load(x, [0, 0], [8, 32])
        y[0:8, 0:16] = t


@pl.jit
def mixed_dtypes_no_cast(x: pl.Tensor, h: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="mixed"):
        a = pl.load(x, [0, 0], [8, 32])
        b = pl.load(h, [0, 0], [8, 32])
        pl.store(pl.add(a, b), [0, 0], y)


@pl.jit
def tensor_op_on_host(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    y[:, :] = pl.add(x, x)


@pl.jit
def name_hint_not_identifier(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="my kernel"):
        pl.store(pl.load(x, [0, 0], [8, 32]), [0, 0], y)


@pl.jit
def load_past_end(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="past_end"):
        t = pl.load(x, [8, 0], [16, 32])
        pl.store(t, [0, 0], y)


@pl.jit
def cast_unknown_mode(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="cast_mode"):
        t = pl.load(x, [0, 0], [8, 32])
        pl.store(pl.cast(t, pl.FP16, mode="nearest"), [0, 0], y)


@pl.jit
def gather_mask_other_width(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="gather_width"):
        t = pl.load(x, [0, 0], [8, 32])
        pl.store(pl.gather(t, mask_pattern=pl.MaskPattern.P0101, output_dtype=pl.FP16), [0, 0], y)


@pl.jit
def concat_rows_differ(a: pl.Tensor, b: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="concat_rows"):
        ta = pl.load(a, [0, 0], [8, 32])
        tb = pl.load(b, [0, 0], [16, 32])
        pl.store(pl.concat(ta, tb), [0, 0], y)


@pl.jit
def fillpad_null(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="fill_null"):
        t = pl.load(x, [0, 0], [8, 32], valid_shape=[8, 20])
        pl.store(pl.fillpad(t, pad_value=pl.PadValue.null), [0, 0], y)


@pl.jit
def arange_two_rows(y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="arange2"):
        pl.store(pl.arange(0, [2, 32], dtype=pl.INT32), [0, 0], y)


@pl.jit
def row_sum_tile_without_tmp(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="rowsum_no_tmp"):
        t = pl.load(x, [0, 0], [8, 32])
        pl.store(pl.row_sum(t), [0, 0], y)


@pl.jit
def spmd_same_work(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.spmd(4):  # noqa: SIM117 - nested as users write it: the pl.at region is the launched kernel
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="same"):
            pl.store(pl.load(x, [0, 0], [8, 32]), [0, 0], y)


@pl.jit
def store_window_past_end(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="store_past"):
        t = pl.load(x, [0, 0], [8, 32])
        pl.store(t, [4, 0], y)


@pl.jit
def read_out_of_range(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    v = pl.read(x, [8, 0])
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="read_oob"):
        pl.store(pl.adds(pl.load(x, [0, 0], [8, 32]), v), [0, 0], y)
