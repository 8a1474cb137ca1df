"""The automatic cube/vector split (SplitCubeVector) against the same program split by hand.

Each pattern is written twice as a ``@pl.jit`` entry: once as one ``pl.at`` region that mixes the
matmul with vector ops (the compiler splits it into ``<region>_matmul`` and ``<region>_vector``
kernels, the intermediate through GM), once as two regions written by hand (the matmul in one, the
vector ops in the other). Both run on the emulator; the table gives simulated cycles, launches and
the worst error against NumPy (float64 on the same rounded inputs).

    python benchmarks/cube_vector_split.py [--platform a2a3sim|a5sim] [--large]

``--large`` adds 512x256 @ 256x512 shapes.
"""

from __future__ import annotations

import argparse

import numpy as np

import pypto.language as pl
from pypto.runtime import RunConfig


@pl.jit
def linear_split(x: pl.Tensor, w: pl.Tensor, b: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="linear"):
        y = pl.relu(pl.add(pl.matmul(x, w, out_dtype=pl.FP32), b))
    return y


@pl.jit
def linear_by_hand(x: pl.Tensor, w: pl.Tensor, b: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="project"):
        h = pl.matmul(x, w, out_dtype=pl.FP32)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="bias_relu"):
        y = pl.relu(pl.add(h, b))
    return y


@pl.jit
def scores_split(q: pl.Tensor, k: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="scores"):
        y = pl.softmax(pl.matmul(q, pl.transpose(k, 0, 1), out_dtype=pl.FP32))
    return y


@pl.jit
def scores_by_hand(q: pl.Tensor, k: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="qk"):
        s = pl.matmul(q, k, out_dtype=pl.FP32, b_trans=True)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="softmax"):
        y = pl.softmax(s)
    return y


@pl.jit
def exp_operand_split(x: pl.Tensor, w: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="expmm"):
        y = pl.matmul(pl.exp(x), w, out_dtype=pl.FP32)
    return y


@pl.jit
def exp_operand_by_hand(x: pl.Tensor, w: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="exp"):
        e = pl.exp(x)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="mm"):
        y = pl.matmul(e, w, out_dtype=pl.FP32)
    return y


def _softmax(s: np.ndarray) -> np.ndarray:
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def cases(m: int, k: int, n: int, rng: np.random.Generator) -> list:
    """(name, split entry, hand-split entry, inputs, output shape, NumPy reference)."""
    x = rng.standard_normal((m, k)).astype(np.float16)
    w = rng.standard_normal((k, n)).astype(np.float16)
    kt = rng.standard_normal((n, k)).astype(np.float16)
    b = rng.standard_normal((1, n)).astype(np.float32)
    xs = (x * 0.3).astype(np.float16)
    f = lambda a: a.astype(np.float64)
    e16 = np.exp(xs.astype(np.float32)).astype(np.float16)
    return [
        (f"relu(x@w+b) {m}x{k}@{k}x{n}", linear_split, linear_by_hand, (x, w, b), np.maximum(f(x) @ f(w) + b, 0)),
        (f"softmax(q@k^T) {m}x{k}@{k}x{n}", scores_split, scores_by_hand, (x, kt), _softmax(f(x) @ f(kt).T)),
        (f"exp(x)@w {m}x{k}@{k}x{n}", exp_operand_split, exp_operand_by_hand, (xs, w), f(e16) @ f(w)),
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--platform", default="a2a3sim", help="RunConfig.platform: the machine model")
    ap.add_argument("--large", action="store_true")
    args = ap.parse_args()
    config = RunConfig(platform=args.platform)
    shapes = [(100, 130, 70)] + ([(512, 256, 512)] if args.large else [])
    rng = np.random.default_rng(0)
    print(f"{'pattern':34} {'split cycles':>12} {'by hand':>10} {'ratio':>6} {'launches':>9} {'max err':>9}")
    for m, k, n in shapes:
        for name, split, by_hand, inputs, want in cases(m, k, n, rng):
            row = []
            for fn in (split, by_hand):
                y = np.zeros(want.shape, np.float32)
                fn(*inputs, y, config=config)
                r = fn.last_result
                err = float(np.abs(y - want).max())
                if r.status != "ok" or not np.allclose(y, want, rtol=1e-4, atol=2e-6 * k + 1e-5):
                    raise SystemExit(f"{name}: {fn.__name__} does not match NumPy (max error {err})")
                row.append((r.cycles, r.launches, err))
            (c1, l1, e1), (c2, l2, e2) = row
            print(f"{name:34} {c1:>12} {c2:>10} {c1 / c2:>6.3f} {f'{l1}/{l2}':>9} {max(e1, e2):>9.2e}")


if __name__ == "__main__":
    main()
