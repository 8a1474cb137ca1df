"""A K-looped fp16 GEMM written at the tile level the way upstream's matmul examples write it: Mat loads,
moves to Left/Right, `pl.matmul(..., out_dtype=pl.FP32)` on the first K step (the Acc dtype, said
explicitly) and `pl.matmul_acc` after it, one store of the accumulator."""
import pypto.language as pl

KT = 32


@pl.jit
def gemm_k_loop(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    M, K = a.shape
    N = b.shape[1]
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="gemm"):
        acc = pl.create_tile([M, N], dtype=pl.FP32, target_memory=pl.Mem.Acc)
        for k in pl.range(0, K, KT):
            al = pl.move(pl.load(a, [0, k], [M, KT], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
            bl = pl.move(pl.load(b, [k, 0], [KT, N], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
            if k == 0:
                acc = pl.matmul(al, bl, out_dtype=pl.FP32)
            else:
                acc = pl.matmul_acc(acc, al, bl)
        pl.store(acc, [0, 0], c)


@pl.jit
def gemm_fp16_out(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    M, K = a.shape
    N = b.shape[1]
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="gemm16"):
        al = pl.move(pl.load(a, [0, 0], [M, K], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
        bl = pl.move(pl.load(b, [0, 0], [K, N], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
        pl.store(pl.matmul(al, bl, out_dtype=pl.FP16), [0, 0], c)
