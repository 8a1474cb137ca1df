"""Red team 13: mistakes in @pl.jit programs around pl.load, each refused at the user's line with the
user's spelling (see test_round13_jit_mistakes.py for the line and the message)."""
import pypto.language as pl


@pl.jit
def load_past_the_end(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="past"):
        pl.store(pl.load(x, [8, 0], [16, 32]), [0, 0], y)


@pl.jit
def load_offsets_of_the_wrong_rank(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="rank"):
        pl.store(pl.load(x, [0], [16, 32]), [0, 0], y)


@pl.jit
def load_into_left(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="left"):
        pl.store(pl.load(x, [0, 0], [16, 32], target_memory=pl.Mem.Left), [0, 0], y)


@pl.jit
def fp16_scaled_by_a_float_literal(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="lit"):
        t = pl.load(x, [0, 0], [16, 32])
        pl.store(pl.muls(t, 0.5), [0, 0], y)


@pl.jit
def load_a_tile(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="tile"):
        t = pl.load(x, [0, 0], [16, 32])
        pl.store(pl.load(t, [0, 0], [8, 32]), [0, 0], y)
