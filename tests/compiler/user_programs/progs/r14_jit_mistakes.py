"""Red team 14: mistakes in @pl.jit programs around loops and subscripts, each refused at the user's
line (see test_round14_jit_mistakes.py for the line and the message)."""
import pypto.language as pl


@pl.jit
def pipeline_without_stage(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="nostage"):
        for i in pl.pipeline(2):
            pl.store(pl.load(x, [i * 8, 0], [8, 32]), [i * 8, 0], y)


@pl.jit
def unroll_with_init_values(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="unroll"):
        t0 = pl.load(x, [0, 0], [8, 32])
        for _i, (t,) in pl.unroll(2, init_values=(t0,)):
            t1 = pl.yield_(pl.adds(t, 1.0))
        pl.store(t1, [0, 0], y)


@pl.jit
def subscript_with_a_step(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="step"):
        y[0:8, :] = pl.adds(x[0:16:2, :], 1.0)


@pl.jit
def subscript_with_a_negative_index(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="neg"):
        y[0:8, :] = pl.adds(x[-8:, :], 1.0)


@pl.jit
def slice_assignment_of_another_shape(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="shape"):
        y[0:8, 0:16] = pl.adds(x[0:8, :], 1.0)


@pl.jit
def while_without_cond_first(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="nocond"):
        t0 = pl.load(x, [0, 0], [8, 32])
        for (t, n) in pl.while_(init_values=(t0, 0)):
            t2 = pl.adds(t, 1.0)
            pl.cond(n < 3)
            t, n = pl.yield_(t2, n + 1)
        pl.store(t, [0, 0], y)
