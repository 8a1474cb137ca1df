"""Split-K matmul with @pl.jit: C = A @ B, the K dimension split over pl.spmd blocks that add their
partial products into C with atomic stores.

C[M, N] (fp32) = A[M, K] (fp16) @ B[K, N] (fp16). A first region zeroes C (atomic adds need a zero
target). Then ``pl.spmd(SPLITS)`` launches one cube kernel as SPLITS blocks: block ``s`` walks its
K range ``[s * K/SPLITS, (s + 1) * K/SPLITS)`` in steps of KSTEP (matmul, then matmul_acc into the
same L0C tile) and stores its partial product with ``atomic=pl.AtomicType.Add``. The blocks run on
different AIC cores at the same time; their adds land in completion order.

Run: ``python examples/jit/matmul_splitk_spmd.py`` prints the simulated time of one split and of
eight, then OK.
"""

import numpy as np

import pypto.language as pl

KSTEP = 64
Mat, Left, Right = pl.MemorySpace.Mat, pl.MemorySpace.Left, pl.MemorySpace.Right


@pl.jit
def matmul_splitk(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor], splits: int):
    m, k = a.shape
    n = b.shape[1]
    chunk = k // splits
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="zero_c"):
        pl.store(pl.full([m, n], dtype=pl.FP32, value=0.0), [0, 0], c)
    for s in pl.spmd(splits, name_hint="splitk_partial"):
        k0 = s * chunk
        a0 = pl.load(a, [0, k0], [m, KSTEP], target_memory=Mat)
        b0 = pl.load(b, [k0, 0], [KSTEP, n], target_memory=Mat)
        acc = pl.matmul(pl.move(a0, target_memory=Left), pl.move(b0, target_memory=Right))
        for kk in pl.range(KSTEP, chunk, KSTEP):
            ak = pl.load(a, [0, k0 + kk], [m, KSTEP], target_memory=Mat)
            bk = pl.load(b, [k0 + kk, 0], [KSTEP, n], target_memory=Mat)
            acc = pl.matmul_acc(acc, pl.move(ak, target_memory=Left), pl.move(bk, target_memory=Right))
        pl.store(acc, [0, 0], c, atomic=pl.AtomicType.Add)


def reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return a.astype(np.float32) @ b.astype(np.float32)


def main() -> None:
    rng = np.random.default_rng(7)
    a = rng.standard_normal((64, 1024)).astype(np.float16)
    b = rng.standard_normal((1024, 64)).astype(np.float16)
    want = reference(a, b)
    for splits in (1, 8):
        c = np.full((64, 64), np.nan, np.float32)  # zeroed by the first region
        matmul_splitk(a, b, c, splits)
        # fp32 accumulation of fp16 products over K = 1024; the atomic adds change the summation order
        np.testing.assert_allclose(c, want, rtol=1e-4, atol=1e-3 * np.sqrt(a.shape[1]))
        r = matmul_splitk.last_result
        print(f"splits={splits}: {r.cycles} cycles ({r.time_us:.2f} us) on {len(r.cores)} cores")
    print("OK")


if __name__ == "__main__":
    main()
