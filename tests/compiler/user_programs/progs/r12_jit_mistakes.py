"""Red team 12: mistakes in @pl.jit programs, each refused at the user's line (see
test_round12_jit_mistakes.py for the line and the message)."""
import pypto.language as pl

OPTS = []  # optimizations built elsewhere, not a list literal at the call site


@pl.jit
def spmd_for_with_deps(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    for b in pl.spmd(2, deps=[]):
        pl.store(pl.load(x, [b * 8, 0], [8, 32]), [b * 8, 0], y)


@pl.jit
def split_aiv_three(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="three"):
        for lane in pl.split_aiv(3, mode=pl.SplitMode.NONE):
            pl.store(pl.load(x, [lane * 8, 0], [8, 32]), [lane * 8, 0], y)


@pl.jit
def zero_slots(x: pl.Tensor, w: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="zs", optimizations=[pl.cross_core_slot(slot_num=0)]):
        y[:, :] = pl.relu(pl.matmul(x, w, out_dtype=pl.FP32))


@pl.jit
def opts_not_literal(x: pl.Tensor, w: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="ol", optimizations=OPTS):
        y[:, :] = pl.relu(pl.matmul(x, w, out_dtype=pl.FP32))


@pl.jit
def pipeline_no_stage(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="pns"):
        for k in pl.pipeline(4):
            pl.store(pl.load(x, [k * 8, 0], [8, 32]), [k * 8, 0], y)


@pl.jit
def predicate_two_cmps(f: pl.Tensor, x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.spmd(2, predicate=(f[0, 0] > 0 and f[1, 0] > 0)):
        b = pl.tile.get_block_idx()
        pl.store(pl.load(x, [b * 8, 0], [8, 32]), [b * 8, 0], y)


@pl.jit
def tile_subscript_step(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="step"):
        t = pl.load(x, [0, 0], [16, 32])
        pl.store(t[0:16:2, :], [0, 0], y)


@pl.jit
def tile_subscript_runtime_extent(x: pl.Tensor, y: pl.Out[pl.Tensor], n: pl.Scalar[pl.INDEX] = pl.RUNTIME):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="rt_extent"):
        t = pl.load(x, [0, 0], [16, 32])
        pl.store(t[0:n, :], [0, 0], y)


@pl.jit
def matmul_acc_vec_operands(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="macc_vec"):
        t = pl.load(x, [0, 0], [16, 16])
        acc = pl.create_tile([16, 16], dtype=pl.FP32, target_memory=pl.Mem.Acc)
        for k in pl.range(2):
            acc = pl.matmul_acc(acc, t, t, init_cond=(k == 0))
        pl.store(acc, [0, 0], y)


@pl.jit
def out_rebound_other_dtype(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="rebind"):
        y = pl.cast(x, pl.FP16)  # noqa: F841 - the mistake: an Out rebound to another dtype


@pl.jit
def out_rebound_to_tile(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="rebind_tile"):
        y = pl.load(x, [0, 0], [8, 32])
        pl.store(y, [0, 0], y)
