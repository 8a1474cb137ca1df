"""Red team 15 programs: PyPTO written from pypto-jit.md / pypto-language.md alone (the docstring of each
function says what it computes): a local bound in one pl.at region read by the next, pl.parallel tasks with
a scalar read by the orchestration, a tensor-level matmul with a_trans on odd sizes, pl.cast modes on
negatives and ties, pl.split_aiv NONE with lane-guarded stores, and a fused softmax chain of tile ops."""
import pypto.language as pl


@pl.jit
def local_of_one_region_read_by_the_next(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    """x [16, 64] fp32: the first region binds m = row_max(x) (a local, [16, 1]); the second reads it:
    y = exp(x - m)."""
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="rowmax"):
        m = pl.row_max(x)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="shift_exp"):
        t = pl.load(x, [0, 0], [16, 64])
        tm = pl.load(m, [0, 0], [16, 1])
        pl.store(pl.exp(pl.row_expand_sub(t, tm)), [0, 0], y)


@pl.jit
def parallel_tasks_with_a_scalar_read(x: pl.Tensor, s: pl.Tensor, y: pl.Out[pl.Tensor]):
    """x [32, 32] fp32 in four 8-row blocks, one task each (pl.parallel); each block is scaled by the
    scalar s[0, 0] + block index."""
    k = pl.read(s, [0, 0])
    for i in pl.parallel(4):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="scale_block"):
            t = pl.load(x, [i * 8, 0], [8, 32])
            f = pl.cast(i, pl.FP32)
            pl.store(pl.muls(t, k + f), [i * 8, 0], y)


@pl.jit
def matmul_a_transposed_odd(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    """c [24, 40] fp32 = a^T @ b with a [48, 24] fp16 and b [48, 40] fp16, tensor-level (a_trans)."""
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="mmT"):
        c[:, :] = pl.matmul(a, b, out_dtype=pl.FP32, a_trans=True)


@pl.jit
def cast_modes_on_negatives(x: pl.Tensor, f: pl.Out[pl.Tensor], c: pl.Out[pl.Tensor], r: pl.Out[pl.Tensor]):
    """x [8, 16] fp32 to int32 three ways: floor, ceil, round (ties away from zero)."""
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="casts"):
        t = pl.load(x, [0, 0], [8, 16])
        pl.store(pl.cast(t, pl.INT32, mode="floor"), [0, 0], f)
        pl.store(pl.cast(t, pl.INT32, mode="ceil"), [0, 0], c)
        pl.store(pl.cast(t, pl.INT32, mode="round"), [0, 0], r)


@pl.jit
def split_none_guarded_store(x: pl.Tensor, y: pl.Out[pl.Tensor], z: pl.Out[pl.Tensor]):
    """x [16, 32] fp32: both lanes (split NONE) compute x * 2; lane 0 alone stores it to y, lane 1
    alone stores x + 1 to z."""
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="lanes"):
        for aiv_id in pl.split_aiv(2, mode=pl.SplitMode.NONE):
            t = pl.load(x, [0, 0], [16, 32])
            if aiv_id == 0:
                pl.store(pl.muls(t, 2.0), [0, 0], y)
            else:
                pl.store(pl.adds(t, 1.0), [0, 0], z)


@pl.jit
def softmax_then_scale_by_row_sum(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    """x [8, 64] fp32: p = softmax(x) by rows, then y = p * row_sum(x) (a fused chain of tensor ops)."""
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="sm_scale"):
        t = pl.load(x, [0, 0], [8, 64])
        tmp = pl.create_tile([8, 64], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)
        e = pl.exp(pl.row_expand_sub(t, pl.row_max(t, tmp)))
        p = pl.row_expand_div(e, pl.row_sum(e, tmp))
        pl.store(pl.row_expand_mul(p, pl.row_sum(t, tmp)), [0, 0], y)
