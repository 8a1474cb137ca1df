"""Red team 12 programs: PyPTO written from pypto-jit.md alone, the way upstream and pypto-lib users
write them (the docstring of each function says what it computes)."""
import pypto.language as pl


@pl.jit
def clamped_tail_rows(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    """Row sums of x [20, 32] in blocks of 8 rows: the last block's window runs past the end and is
    cut there by clamp=True; its valid rows only are stored to y [20, 1]."""
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="clamped"):
        tmp = pl.create_tile([8, 32], dtype=pl.FP32, target_memory=pl.Mem.Vec)
        for i in pl.range(3):
            t = pl.load(x, [i * 8, 0], [8, 32], clamp=True)
            pl.store(pl.row_sum(t, tmp), [i * 8, 0], y)


@pl.jit
def dynamic_rows_bound(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    """y = x * x - x over x [N, 64] with N dynamic (bind_dynamic), 16 rows a step; the last step takes
    what is left (pl.min) through valid_shape."""
    N = pl.dynamic("N")
    x.bind_dynamic(0, N)
    y.bind_dynamic(0, N)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="dyn_rows"):
        n = pl.tensor.dim(x, 0)
        for r in pl.range(0, n, 16):
            v = pl.min(16, n - r)
            t = pl.load(x, [r, 0], [16, 64], valid_shape=[v, 64])
            pl.store(pl.sub(pl.mul(t, t), t), [r, 0], y)


@pl.jit
def positives_by_compare_gather(x: pl.Tensor, idx: pl.Out[pl.Tensor], cnt: pl.Out[pl.Tensor]):
    """Per row of x [8, 32] fp32: the column indices (offset by 100) of the elements greater than
    0.5, packed to the left, and their count (gather compare form)."""
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="cmp_gather"):
        t = pl.load(x, [0, 0], [8, 32])
        ii, cc = pl.gather(t, kvalue=0.5, cmp_mode="gt", out_cols=32, offset=100)
        pl.store(ii, [0, 0], idx)
        pl.store(cc, [0, 0], cnt)


@pl.jit
def lanes_shard_and_gather(x: pl.Tensor, w: pl.Tensor, y: pl.Out[pl.Tensor]):
    """y = relu(x) @ w with the relu split across the two AIV lanes by rows (split_aiv UP_DOWN), the
    matmul on the cube reading the lanes' halves joined by pl.aic_gather; x [32, 32], w [32, 32] fp16."""
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="relu_mm"):
        for _lane in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
            h = pl.relu(pl.load(x, [0, 0], [32, 32]))
        wm = pl.load(w, [0, 0], [32, 32], target_memory=pl.Mem.Mat)
        p = pl.matmul(pl.move(pl.aic_gather(h), target_memory=pl.Mem.Left), pl.move(wm, target_memory=pl.Mem.Right))
        pl.store(p, [0, 0], y)


@pl.jit
def manual_scope_join(x: pl.Tensor, a: pl.Out[pl.Tensor], b: pl.Out[pl.Tensor], c: pl.Out[pl.Tensor]):
    """In a manual scope: a = x + 1 and b = x * 2 as two independent tasks, then c = a + b ordered
    after both by a task_dummy join in its deps."""
    with pl.manual_scope():
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="plus") as t1:
            a[:, :] = pl.adds(x, 1.0)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="times") as t2:
            b[:, :] = pl.muls(x, 2.0)
        j = pl.system.task_dummy(deps=[t1, t2])
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="sum", deps=[j]):
            c[:, :] = pl.add(a, b)


@pl.jit
def cast_modes_to_int32(x: pl.Tensor, f: pl.Out[pl.Tensor], c: pl.Out[pl.Tensor], t: pl.Out[pl.Tensor],
                        r: pl.Out[pl.Tensor], e: pl.Out[pl.Tensor]):
    """fp32 x [8, 32] to int32 with the modes floor, ceil, trunc, round (ties away) and rint (ties
    to even), each by name."""
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="casts"):
        v = pl.load(x, [0, 0], [8, 32])
        pl.store(pl.cast(v, pl.INT32, mode="floor"), [0, 0], f)
        pl.store(pl.cast(v, pl.INT32, mode="ceil"), [0, 0], c)
        pl.store(pl.cast(v, pl.INT32, mode="trunc"), [0, 0], t)
        pl.store(pl.cast(v, pl.INT32, mode="round"), [0, 0], r)
        pl.store(pl.cast(v, pl.INT32, mode="rint"), [0, 0], e)


@pl.jit
def pipeline_running_sum(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    """y [8, 32] = sum of the 5 column blocks x[:, 32k:32k+32] of x [8, 160], in a pl.pipeline loop
    with stage=2 (ping-pong, with a tail for the odd count) carrying the sum."""
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="pipe_sum"):
        acc = pl.full([8, 32], dtype=pl.FP32, value=0.0)
        for k in pl.pipeline(5, stage=2):
            acc = pl.add(acc, pl.load(x, [0, k * 32], [8, 32]))
        pl.store(acc, [0, 0], y)


@pl.jit
def int8_linear_int32(x: pl.Tensor, w: pl.Tensor, y: pl.Out[pl.Tensor]):
    """y = x @ w in int32 from int8 x [16, 64] and w [64, 32] (tensor level), plus 1000."""
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="i8_linear"):
        y[:, :] = pl.adds(pl.matmul(x, w, out_dtype=pl.INT32), 1000)


@pl.jit
def spmd_rows_predicated(flags: pl.Tensor, x: pl.Tensor, y: pl.Out[pl.Tensor]):
    """y = -x, in two SPMD launches of 2 blocks each over rows [0, 16) and [16, 32) of x [32, 32],
    each launched only if flags[k, 0] > 0 (predicate=); rows of a skipped launch keep y's contents."""
    with pl.spmd(2, predicate=(flags[0, 0] > 0)):
        b = pl.tile.get_block_idx()
        pl.store(pl.neg(pl.load(x, [b * 8, 0], [8, 32])), [b * 8, 0], y)
    with pl.spmd(2, predicate=(flags[1, 0] > 0)):
        b = pl.tile.get_block_idx()
        pl.store(pl.neg(pl.load(x, [16 + b * 8, 0], [8, 32])), [16 + b * 8, 0], y)


@pl.jit
def runtime_scale(x: pl.Tensor, y: pl.Out[pl.Tensor], s: pl.Scalar[pl.FP32] = pl.RUNTIME):
    """y = x * s with s a runtime scalar parameter (compiled once for every value)."""
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="rt_scale"):
        y[:, :] = pl.muls(x, s)


@pl.jit
def fillpad_expand_row_max(x: pl.Tensor, m: pl.Out[pl.Tensor]):
    """Row max of the first 5 rows x 20 columns of x [8, 32]: loaded with valid_shape [5, 20], widened
    to [16, 32] with -inf padding (fillpad_expand), then row_max over the whole tile ([16, 1])."""
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="pad_max"):
        t = pl.load(x, [0, 0], [8, 32], valid_shape=[5, 20])
        w = pl.fillpad_expand(t, [16, 32], pad_value=pl.PadValue.min)
        tmp = pl.create_tile([16, 32], dtype=pl.FP32, target_memory=pl.Mem.Vec)
        pl.store(pl.row_max(w, tmp), [0, 0], m)


@pl.jit
def spmd_syncall_reduce(x: pl.Tensor, part: pl.Out[pl.Tensor], total: pl.Out[pl.Tensor]):
    """Four blocks started together: block b writes 2 * rows [8b, 8b+8) of x [32, 16] into the same
    rows of part; after a chip-wide barrier (pl.system.syncall) block 0 adds the four [8, 16] blocks
    of part into total."""
    for b in pl.spmd(4, sync_start=True, name_hint="sum_blocks"):
        t = pl.load(x, [b * 8, 0], [8, 16])
        pl.store(pl.muls(t, 2.0), [b * 8, 0], part)
        pl.system.syncall()
        if b == 0:
            acc = pl.load(part, [0, 0], [8, 16])
            for j in pl.range(1, 4):
                acc = pl.add(acc, pl.load(part, [j * 8, 0], [8, 16]))
            pl.store(acc, [0, 0], total)


@pl.jit
def scalar_casts_round(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    """y[0, j] = pl.cast(x[0, j], pl.INT32) element by element on scalars (pl.read / pl.write), with
    the default mode "round" (nearest, ties away from zero), as the same cast of a tile does."""
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="scalar_casts"):
        for j in pl.range(8):
            pl.write(y, [0, j], pl.cast(pl.read(x, [0, j]), pl.INT32))
