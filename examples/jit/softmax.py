"""Row softmax with @pl.jit: an @pl.jit.incore kernel per 32-row block, called from the entry's loop.

Run: ``python examples/jit/softmax.py`` prints OK.
"""

import numpy as np

import pypto.language as pl

BLOCK = 32


@pl.jit.incore
def softmax_block(x: pl.Tensor, y: pl.Out[pl.Tensor], row: pl.Scalar[pl.INDEX]):
    cols = x.shape[1]
    t = pl.load(x, [row, 0], [BLOCK, cols])
    scratch = pl.create_tile([BLOCK, cols], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)
    m = pl.row_max(t, scratch)
    e = pl.exp(pl.row_expand_sub(t, m))
    s = pl.row_sum(e, scratch)
    y = pl.store(pl.row_expand_div(e, s), [row, 0], y)
    return y


@pl.jit
def softmax(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    for r in pl.range(0, x.shape[0], BLOCK):
        y = softmax_block(x, y, r)
    return y


def reference(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def main() -> None:
    rng = np.random.default_rng(1)
    x = rng.standard_normal((128, 64)).astype(np.float32)
    y = np.zeros_like(x)
    softmax(x, y)
    np.testing.assert_allclose(y, reference(x), rtol=1e-5, atol=1e-6)
    print("OK")


if __name__ == "__main__":
    main()
