"""A linear layer with @pl.jit: y = silu(x @ W + b), the matmul on the cube cores and the bias and
activation on the vector cores, both spread over the chip with pl.spmd.

x[M, K] (fp16) @ W[K, N] (fp16) accumulates in fp32. A2/A3 has no core with both cube and vector
buffers, so the layer is two kernels that hand the product over through a DDR tensor ``h`` made by
``pl.create_tensor``: ``linear_matmul`` (one block per TM rows of x, on the AIC cores) and
``bias_silu`` (one block per TV rows of h, on the AIV cores): ``silu(v) = v / (1 + exp(-v))``.

Run: ``python examples/jit/fused_linear.py`` prints the simulated time and OK.
"""

import numpy as np

import pypto.language as pl

TM = 64  # rows of x per cube block
TV = 32  # rows of h per vector block
KSTEP = 64
Mat, Left, Right = pl.MemorySpace.Mat, pl.MemorySpace.Left, pl.MemorySpace.Right


@pl.jit
def fused_linear(x: pl.Tensor, w: pl.Tensor, bias: pl.Tensor, y: pl.Out[pl.Tensor]):
    m, k = x.shape
    n = w.shape[1]
    h = pl.create_tensor([m, n], dtype=pl.FP32)
    for i in pl.spmd(m // TM, name_hint="linear_matmul"):
        r = i * TM
        x0 = pl.load(x, [r, 0], [TM, KSTEP], target_memory=Mat)
        w0 = pl.load(w, [0, 0], [KSTEP, n], target_memory=Mat)
        acc = pl.matmul(pl.move(x0, target_memory=Left), pl.move(w0, target_memory=Right))
        for kk in pl.range(KSTEP, k, KSTEP):
            xk = pl.load(x, [r, kk], [TM, KSTEP], target_memory=Mat)
            wk = pl.load(w, [kk, 0], [KSTEP, n], target_memory=Mat)
            acc = pl.matmul_acc(acc, pl.move(xk, target_memory=Left), pl.move(wk, target_memory=Right))
        pl.store(acc, [r, 0], h)
    for j in pl.spmd(m // TV, name_hint="bias_silu"):
        r = j * TV
        t = pl.load(h, [r, 0], [TV, n])
        v = pl.add(t, pl.col_expand(t, pl.load(bias, [0, 0], [1, n])))
        pl.store(pl.div(v, pl.adds(pl.exp(pl.neg(v)), 1.0)), [r, 0], y)


def reference(x: np.ndarray, w: np.ndarray, bias: np.ndarray) -> np.ndarray:
    v = x.astype(np.float32) @ w.astype(np.float32) + bias
    return v / (1.0 + np.exp(-v))


def main() -> None:
    rng = np.random.default_rng(11)
    x = rng.standard_normal((256, 256)).astype(np.float16)
    w = (rng.standard_normal((256, 128)) / 16).astype(np.float16)
    bias = rng.standard_normal((1, 128)).astype(np.float32)
    y = np.full((256, 128), np.nan, np.float32)
    fused_linear(x, w, bias, y)
    np.testing.assert_allclose(y, reference(x, w, bias), rtol=1e-4, atol=1e-4)
    r = fused_linear.last_result
    print(f"{r.cycles} cycles ({r.time_us:.2f} us), {r.launches} launches on {len(r.cores)} cores")
    print("OK")


if __name__ == "__main__":
    main()
