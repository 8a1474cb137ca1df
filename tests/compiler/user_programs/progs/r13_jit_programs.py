"""Red team 13 programs: PyPTO written from pypto-jit.md alone, the way upstream and pypto-lib users
write them (the docstring of each function says what it computes)."""
import pypto.language as pl


@pl.jit
def spmd_exp_half_fp16(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    """y = exp(x) * 0.5 over x [32, 64] fp16, one 8-row block per SPMD block (4 blocks, the loop form);
    the scale is an FP16 constant (a float literal is FP32 and would promote the tile)."""
    for b in pl.spmd(4):
        t = pl.load(x, [b * 8, 0], [8, 64])
        pl.store(pl.muls(pl.exp(t), pl.const(0.5, pl.FP16)), [b * 8, 0], y)


@pl.jit
def carried_column_sums(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    """y [8, 32] = the sum of the four 8-row blocks of x [32, 32], carried through pl.range
    init_values and pl.yield_ (the value after the loop is the name the last yield binds)."""
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="blocksum"):
        acc0 = pl.load(x, [0, 0], [8, 32])
        for i, (acc,) in pl.range(1, 4, init_values=(acc0,)):
            nxt = pl.add(acc, pl.load(x, [i * 8, 0], [8, 32]))
            total = pl.yield_(nxt)
        pl.store(total, [0, 0], y)


@pl.jit
def halves_added_by_subscripts(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    """y [16, 48] = top half + bottom half of x [32, 48], windows taken by subscripts in the region and
    written by slice assignment."""
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="halves"):
        y[0:16, :] = pl.add(x[0:16, :], x[16:32, :])


@pl.jit
def fused_rms_norm_then_silu(x: pl.Tensor, w: pl.Tensor, y: pl.Out[pl.Tensor]):
    """y = silu(rms_norm(x, w, eps=1e-6)) over x [24, 96] fp32, w [96]: pypto-lib ops fused in one
    region."""
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="norm_act"):
        y[:, :] = pl.silu(pl.rms_norm(x, w, eps=1e-6))


@pl.jit
def bf16_matmul_relu_odd_n(a: pl.Tensor, b: pl.Tensor, y: pl.Out[pl.Tensor]):
    """y [48, 40] fp32 = relu(a @ b) with a [48, 32] and b [32, 40] bf16 (N = 40: not a multiple of 16)."""
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="mm_relu"):
        y[:, :] = pl.relu(pl.matmul(a, b, out_dtype=pl.FP32))


@pl.jit
def int32_affine(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    """y = x * 3 + 7 - x over x [16, 40] int32 (wrapping arithmetic of the tile ops)."""
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="affine"):
        y[:, :] = pl.sub(pl.adds(pl.muls(x, 3), 7), x)


@pl.jit
def host_count_drives_tasks(x: pl.Tensor, cnt: pl.Tensor, y: pl.Out[pl.Tensor]):
    """The host reads how many 8-row blocks to process from cnt [1, 1] int32; each block of x [32, 16]
    becomes x + 1 in a task of its own; the rest of y is left as the caller passed it."""
    n = pl.cast(pl.read(cnt, [0, 0]), pl.INDEX)
    for i in pl.range(n):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="plus_one"):
            y[i * 8:i * 8 + 8, :] = pl.adds(x[i * 8:i * 8 + 8, :], 1.0)


@pl.jit
def transpose_odd(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    """y [40, 24] = x.T for x [24, 40] fp32 (pl.transpose of the two axes)."""
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="tr"):
        y[:, :] = pl.transpose(x, 0, 1)


@pl.jit
def column_stats(x: pl.Tensor, s: pl.Out[pl.Tensor], m: pl.Out[pl.Tensor]):
    """Column sums and column maxima of x [20, 48] fp32, kept as [1, 48] rows (keepdim)."""
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="colstats"):
        s[:, :] = pl.sum(x, 0, keepdim=True)
        m[:, :] = pl.max(x, 0, keepdim=True)


@pl.jit
def lanes_left_right_square_plus_one(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    """y = x * x + 1 over x [16, 64], the vector work split across the two AIV lanes by columns
    (pl.split_aiv LEFT_RIGHT): each lane squares its half of every tile."""
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="lanes"):
        for _lane in pl.split_aiv(2, mode=pl.SplitMode.LEFT_RIGHT):
            t = pl.load(x, [0, 0], [16, 64])
            pl.store(pl.adds(pl.mul(t, t), 1.0), [0, 0], y)
