"""Red team 11 programs: PyPTO written from pypto-jit.md alone, the way upstream and pypto-lib users
write them (the docstring of each function says what it computes)."""
import pypto.language as pl

R = 8


@pl.jit
def running_col_max(x: pl.Tensor, m: pl.Out[pl.Tensor], n_pos: pl.Out[pl.Tensor]):
    """Elementwise running max over the four [8, 32] column blocks of x [8, 128], and the number of
    blocks whose first element was positive, both carried through a pl.range loop in one region."""
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="running_max"):
        acc = pl.load(x, [0, 0], [8, 32])
        cnt = 0
        for k in pl.range(4):
            blk = pl.load(x, [0, k * 32], [8, 32])
            acc = pl.maximum(acc, blk)
            if pl.tile.read(blk, [0, 0]) > 0.0:
                cnt = cnt + 1
        pl.store(acc, [0, 0], m)
        pl.write(n_pos, [0, 0], pl.cast(cnt, pl.INT32))


@pl.jit
def spmd_scale_bf16_tail(x: pl.Tensor, y: pl.Out[pl.Tensor], s: float):
    """y = bf16(f32(x) * s) over x [rows, 64] bf16, one SPMD block per 8 rows; the last block takes
    what is left (rows not a multiple of 8) through valid_shape."""
    rows, cols = x.shape
    nb = (rows + R - 1) // R
    for i in pl.spmd(nb, name_hint="scale_rows"):
        left = pl.min(R, rows - i * R)
        t = pl.load(x, [i * R, 0], [R, cols], valid_shape=[left, cols])
        o = pl.cast(pl.muls(pl.cast(t, pl.FP32), s), pl.BF16)
        pl.store(o, [i * R, 0], y)


@pl.jit.incore
def add_one(src: pl.Tensor, dst: pl.Out[pl.Tensor]):
    t = pl.load(src, [0, 0], [8, 16])
    pl.store(pl.adds(t, 1.0), [0, 0], dst)
    return dst


@pl.jit
def views_as_outputs(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    """y [16, 32] gets x + 1 quadrant by quadrant: each kernel call reads an [8, 16] view of x and
    writes an [8, 16] view of y (orchestration subscripts are views, pypto-jit §6.1)."""
    for r in pl.range(2):
        for c in pl.range(2):
            add_one(x[r * 8:r * 8 + 8, c * 16:c * 16 + 16], y[r * 8:r * 8 + 8, c * 16:c * 16 + 16])


@pl.jit
def int32_affine(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    """y = (x * 3 + 7) - x over int32 [16, 32] at tensor level."""
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="int_affine"):
        y[:, :] = pl.sub(pl.adds(pl.muls(x, 3), 7), x)


@pl.jit
def concat_row_sums(a: pl.Tensor, b: pl.Tensor, s: pl.Out[pl.Tensor]):
    """s[i, 0] = sum of row i of concat(a, b) for a [8, 32] and b [8, 32] fp32."""
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="concat_sum"):
        ta = pl.load(a, [0, 0], [8, 32])
        tb = pl.load(b, [0, 0], [8, 32])
        c = pl.concat(ta, tb)
        tmp = pl.create_tile([8, 64], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)
        pl.store(pl.row_sum(c, tmp), [0, 0], s)


@pl.jit
def linear_bf16_bias_relu(x: pl.Tensor, w: pl.Tensor, b: pl.Tensor, y: pl.Out[pl.Tensor]):
    """y = relu(x @ w + b) in fp32 from bf16 x [32, 64] and w [64, 48], bias b [1, 48] fp32."""
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="linear_bf16"):
        y[:, :] = pl.relu(pl.add(pl.matmul(x, w, out_dtype=pl.FP32), b))


@pl.jit
def rms_norm_fp16(x: pl.Tensor, g: pl.Tensor, y: pl.Out[pl.Tensor]):
    """RMSNorm of fp16 x [16, 64] with fp16 weight g [1, 64], computed in fp32, result fp16."""
    rows, cols = x.shape
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="rms_fp16"):
        t = pl.cast(pl.load(x, [0, 0], [rows, cols]), pl.FP32)
        tmp = pl.create_tile([rows, cols], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)
        ms = pl.muls(pl.row_sum(pl.mul(t, t), tmp), 1.0 / cols)
        inv = pl.rsqrt(pl.adds(ms, 1e-6))
        gw = pl.cast(pl.load(g, [0, 0], [1, cols]), pl.FP32)
        pl.store(pl.cast(pl.col_expand_mul(pl.row_expand_mul(t, inv), gw), pl.FP16), [0, 0], y)


@pl.jit
def host_read_picks_rows(x: pl.Tensor, n: pl.Tensor, y: pl.Out[pl.Tensor]):
    """y[0:k] = 2 * x[0:k] where k = n[0, 0] is read on the host; rows past k keep y's contents."""
    k = pl.cast(pl.read(n, [0, 0]), pl.INDEX)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="first_k"):
        t = pl.load(x, [0, 0], [16, 32], valid_shape=[k, 32])
        pl.store(pl.muls(t, 2.0), [0, 0], y)


@pl.jit
def splitk_atomic(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    """c = a @ b with K = 128 split over 4 SPMD blocks of 32, each adding its partial product into
    c (zeroed first in its own region) with pl.assemble(..., atomic=Add); fp16 in, fp32 out."""
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="zero_c"):
        c[:, :] = pl.full([16, 32], dtype=pl.FP32, value=0.0)
    for k in pl.spmd(4, name_hint="partial"):
        ta = pl.load(a, [0, k * 32], [16, 32], target_memory=pl.Mem.Mat)
        tb = pl.load(b, [k * 32, 0], [32, 32], target_memory=pl.Mem.Mat)
        p = pl.matmul(pl.move(ta, target_memory=pl.Mem.Left), pl.move(tb, target_memory=pl.Mem.Right))
        pl.assemble(c, p, [0, 0], atomic=pl.AtomicType.Add)


@pl.jit
def attn_scores_trans_b(q: pl.Tensor, k: pl.Tensor, s: pl.Out[pl.Tensor]):
    """s = (q @ k^T) * 0.125 at tensor level with b_trans=True: q [16, 64], k [32, 64] fp16."""
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="scores"):
        s[:, :] = pl.muls(pl.matmul(q, k, b_trans=True, out_dtype=pl.FP32), 0.125)


@pl.jit.inline
def stats(t, mx: pl.Out[pl.Tensor], sm: pl.Out[pl.Tensor]):
    tmp = pl.create_tile([8, 64], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)
    pl.store(pl.row_max(t, tmp), [0, 0], mx)
    pl.store(pl.row_sum(t, tmp), [0, 0], sm)
    return mx


@pl.jit
def inline_two_outputs(x: pl.Tensor, mx: pl.Out[pl.Tensor], sm: pl.Out[pl.Tensor]):
    """Row max and row sum of x [8, 64] by an inline helper writing two Out tensors, one returned."""
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="stats"):
        t = pl.load(x, [0, 0], [8, 64])
        stats(t, mx, sm)


@pl.jit
def two_stage_through_local(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    """y = exp(x) - 1 in two regions: the first writes a local tensor h = exp(x), the second reads
    it (a name bound in one region and used in the next becomes a DDR task output, pypto-jit §4.1)."""
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="stage1"):
        h = pl.exp(pl.load(x, [0, 0], [16, 32]))
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="stage2"):
        pl.store(pl.adds(h, -1.0), [0, 0], y)


@pl.jit
def unrolled_prefix_sum(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    """y[:, 8k:8k+8] = sum of x[:, 0:8], ..., x[:, 8k:8k+8] for k = 0..3 (pl.unroll with a carried tile)."""
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="prefix"):
        acc = pl.full([8, 8], dtype=pl.FP32, value=0.0)
        for k in pl.unroll(4):
            acc = pl.add(acc, pl.load(x, [0, k * 8], [8, 8]))
            pl.store(acc, [0, k * 8], y)


@pl.jit
def reshape_column_to_row(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    """Row sums of x [16, 32] computed as a [16, 1] column, reshaped to a [1, 16] row and scaled."""
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="col_to_row"):
        t = pl.load(x, [0, 0], [16, 32])
        tmp = pl.create_tile([16, 32], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)
        r = pl.reshape(pl.row_sum(t, tmp), [1, 16])
        pl.store(pl.muls(r, 0.5), [0, 0], y)


@pl.jit
def while_doubling_count(x: pl.Tensor, y: pl.Out[pl.Tensor], n: pl.Out[pl.Tensor]):
    """Double x[0:1, 0:16] until its first element reaches 100, counting the doublings."""
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="doubling"):
        t = pl.load(x, [0, 0], [1, 16])
        f0 = pl.tile.read(t, [0, 0])
        for (k, v, f) in pl.while_(init_values=(0, t, f0)):
            pl.cond(f < 100.0)
            v2 = pl.muls(v, 2.0)
            k_out, v_out, _f = pl.yield_(k + 1, v2, pl.tile.read(v2, [0, 0]))
        pl.store(v_out, [0, 0], y)
        pl.write(n, [0, 0], pl.cast(k_out, pl.INT32))


@pl.jit
def parallel_blocks_host_offset(x: pl.Tensor, y: pl.Out[pl.Tensor], base: int):
    """y[i*8:(i+1)*8] = x[i*8:(i+1)*8] + base + i for i in 0..3, one task per pl.parallel iteration."""
    for i in pl.parallel(4):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="add_i"):
            t = pl.load(x, [i * 8, 0], [8, 16])
            pl.store(pl.adds(t, pl.cast(base + i, pl.FP32)), [i * 8, 0], y)


@pl.jit
def even_odd_cols(x: pl.Tensor, ev: pl.Out[pl.Tensor], od: pl.Out[pl.Tensor]):
    """Even and odd columns of x [16, 8] fp32 by the mask-form gather (P0101 / P1010): each result
    is [16, 4], rows of 16 bytes, narrower than a vector tile row of 32."""
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="even_odd"):
        t = pl.load(x, [0, 0], [16, 8])
        pl.store(pl.gather(t, mask_pattern=pl.MaskPattern.P0101), [0, 0], ev)
        pl.store(pl.gather(t, mask_pattern=pl.MaskPattern.P1010), [0, 0], od)
