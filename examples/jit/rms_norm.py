"""RMS norm with @pl.jit: y = x / sqrt(mean(x^2) + eps) * gamma, one pl.at region per row block.

Run: ``python examples/jit/rms_norm.py`` prints OK.
"""

import numpy as np

import pypto.language as pl

BLOCK = 16
EPS = 1e-6


@pl.jit
def rms_norm(x: pl.Tensor, gamma: pl.Tensor, y: pl.Out[pl.Tensor]):
    rows, cols = x.shape
    for r in pl.range(0, rows, BLOCK):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="rms_norm_block"):
            t = pl.load(x, [r, 0], [BLOCK, cols])
            g = pl.load(gamma, [0, 0], [1, cols])
            scratch = pl.create_tile([BLOCK, cols], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)
            ms = pl.muls(pl.row_sum(pl.mul(t, t), scratch), 1.0 / cols)
            inv = pl.rsqrt(pl.adds(ms, EPS))
            pl.store(pl.col_expand_mul(pl.row_expand_mul(t, inv), g), [r, 0], y)


def reference(x: np.ndarray, gamma: np.ndarray) -> np.ndarray:
    return x / np.sqrt((x * x).mean(axis=1, keepdims=True) + EPS) * gamma


def main() -> None:
    rng = np.random.default_rng(2)
    x = rng.standard_normal((64, 128)).astype(np.float32)
    gamma = rng.standard_normal((1, 128)).astype(np.float32)
    y = np.zeros_like(x)
    rms_norm(x, gamma, y)
    np.testing.assert_allclose(y, reference(x, gamma), rtol=1e-5, atol=1e-5)
    print("OK")


if __name__ == "__main__":
    main()
