"""Red team 14 programs: PyPTO written from pypto-jit.md alone, the way upstream and pypto-lib users
write them (the docstring of each function says what it computes)."""
import pypto.language as pl


@pl.jit
def count_read_in_kernel(x: pl.Tensor, cnt: pl.Tensor, y: pl.Out[pl.Tensor]):
    """The kernel reads how many 8-row blocks of x [32, 16] to add one to from cnt [1, 1] int32 and
    loops over that INT32 count itself (the rest of y is left as the caller passed it)."""
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="plus_one_n"):
        n = pl.read(cnt, [0, 0])
        for i in pl.range(n):
            t = pl.load(x, [i * 8, 0], [8, 16])
            pl.store(pl.adds(t, 1.0), [i * 8, 0], y)


@pl.jit
def pipelined_scaled_blocks_and_total(x: pl.Tensor, y: pl.Out[pl.Tensor], total: pl.Out[pl.Tensor]):
    """x [40, 32] fp32 in five 8-row blocks: y block i = x block i * (i + 1), through pl.pipeline
    (stage=2, an odd trip count: the tail); total [8, 32] = the sum of the scaled blocks, a tile carried
    by rebinding."""
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="scale_sum"):
        acc = pl.full([8, 32], dtype=pl.FP32, value=0.0)
        for i in pl.pipeline(5, stage=2):
            s = pl.cast(i + 1, pl.FP32)
            t = pl.muls(pl.load(x, [i * 8, 0], [8, 32]), s)
            pl.store(t, [i * 8, 0], y)
            acc = pl.add(acc, t)
        pl.store(acc, [0, 0], total)


@pl.jit
def while_doubling_until_large(x: pl.Tensor, y: pl.Out[pl.Tensor], steps: pl.Out[pl.Tensor]):
    """A tile of x [8, 16] fp32 doubled while a scalar bound (1, 2, 4, ...) stays below 100: seven
    doublings (1 -> 128); the count is written to steps [1, 1] int32."""
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="doubling"):
        t0 = pl.load(x, [0, 0], [8, 16])
        for (t, bound, n) in pl.while_(init_values=(t0, 1, 0)):
            pl.cond(bound < 100)
            t2 = pl.muls(t, 2.0)
            t, bound, n = pl.yield_(t2, bound * 2, n + 1)
        pl.store(t, [0, 0], y)
        pl.write(steps, [0, 0], pl.cast(n, pl.INT32))


@pl.jit
def spmd_clamped_tail_blocks(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    """x [40, 32] fp32 in 16-row blocks over 3 SPMD blocks: the last block reads rows 32..39 only
    (clamp=True cuts its valid region) and stores just those; y = x * x - 1."""
    for b in pl.spmd(3):
        t = pl.load(x, [b * 16, 0], [16, 32], clamp=True)
        pl.store(pl.adds(pl.mul(t, t), -1.0), [b * 16, 0], y)


@pl.jit
def window_views_written_in_place(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    """y [24, 48] fp32: rows 8..15, columns 16..47 get exp(x[0:8, 0:32]); rows 0..7, columns 0..15
    get x[8:16, 32:48] negated; the rest of y is left as the caller passed it."""
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="windows"):
        y[8:16, 16:48] = pl.exp(x[0:8, 0:32])
        y[0:8, 0:16] = pl.neg(x[8:16, 32:48])


@pl.jit
def concat_then_reshape_rows(a: pl.Tensor, b: pl.Tensor, y: pl.Out[pl.Tensor]):
    """a, b [8, 32] fp32 joined column-wise (pl.concat: [8, 64]) and reshaped row-major to [16, 32],
    plus one."""
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="join"):
        y[:, :] = pl.adds(pl.reshape(pl.concat(a, b), [16, 32]), 1.0)


@pl.jit
def int8_dequant_scaled_fp16(q: pl.Tensor, y: pl.Out[pl.Tensor]):
    """y [16, 64] fp16 = cast(q [16, 64] int8) * 0.125, an int8 dequantisation."""
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="dequant"):
        t = pl.cast(pl.load(q, [0, 0], [16, 64]), pl.FP16)
        pl.store(pl.muls(t, pl.const(0.125, pl.FP16)), [0, 0], y)


@pl.jit
def split_k_atomic_gemm(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    """c [32, 32] fp32 = a [32, 128] @ b [128, 32] (fp16) as four K chunks of 32 (tiles loaded to Mat
    and moved to Left / Right, as a subscript inside the region loads a Vec tile), each
    a task adding its product into c with atomic add, after a region that zeroes c."""
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="zero"):
        pl.store(pl.full([32, 32], dtype=pl.FP32, value=0.0), [0, 0], c)
    for k in pl.parallel(4):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="chunk"):
            ta = pl.load(a, [0, k * 32], [32, 32], target_memory=pl.MemorySpace.Mat)
            tb = pl.load(b, [k * 32, 0], [32, 32], target_memory=pl.MemorySpace.Mat)
            part = pl.matmul(pl.move(ta, target_memory=pl.MemorySpace.Left),
                             pl.move(tb, target_memory=pl.MemorySpace.Right))
            pl.assemble(c, part, [0, 0], atomic=pl.AtomicType.Add)


@pl.jit
def softmax_then_layer_norm(x: pl.Tensor, g: pl.Tensor, bta: pl.Tensor, y: pl.Out[pl.Tensor]):
    """pypto-lib fusion: y = layer_norm(softmax(x) * 16, g, b, eps=1e-5) over x [16, 48] fp32, g and b
    [48]."""
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="sm_ln"):
        y[:, :] = pl.layer_norm(pl.muls(pl.softmax(x), 16.0), g, bta, eps=1e-5)
