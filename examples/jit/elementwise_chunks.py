"""Elementwise y = (a + b) * 2 over row chunks: a @pl.jit entry, one pl.at region per chunk.

Run: ``python examples/jit/elementwise_chunks.py`` prints OK.
"""

import numpy as np

import pypto.language as pl
from pypto.runtime import RunConfig

CHUNK = 32


@pl.jit
def add_scale(a: pl.Tensor, b: pl.Tensor, y: pl.Out[pl.Tensor]):
    rows, cols = a.shape
    for r in pl.range(0, rows, CHUNK):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="add_scale_chunk"):
            ta = pl.load(a, [r, 0], [CHUNK, cols])
            tb = pl.load(b, [r, 0], [CHUNK, cols])
            pl.store(pl.mul(pl.add(ta, tb), 2.0), [r, 0], y)
    return y


def main() -> None:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((128, 64)).astype(np.float32)
    b = rng.standard_normal((128, 64)).astype(np.float32)
    y = np.zeros_like(a)
    add_scale(a, b, y, config=RunConfig(platform="a2a3sim"))
    np.testing.assert_allclose(y, (a + b) * 2.0, rtol=1e-6, atol=1e-6)
    print("OK")


if __name__ == "__main__":
    main()
