"""A name bound to a number the jit folds (``best = -1.0``, ``n = 1 * 1``: not a bare literal) and
assigned again inside a loop or a branch holds the run's value there and after it. The folded number
used to stand in for it everywhere: a running maximum compared every element against -1.0 and kept
the last index above it (MoE top-2 picked the wrong experts, exit 0), and a while loop counting
halvings returned 2 for 10.0 instead of 5."""

from __future__ import annotations

import numpy as np

import pypto.language as pl

T, E = 6, 4


@pl.jit
def argmax_rows(probs: pl.Tensor, idx: pl.Out[pl.Tensor]):
    for t in pl.range(T):
        best_i = 0
        best = -1.0
        for e in pl.range(E):
            pe = pl.read(probs, [t, e])
            if pe > best:
                best = pe
                best_i = e
        pl.write(idx, [t, 0], pl.cast(best_i, pl.INT32))


@pl.jit
def second_best(probs: pl.Tensor, idx: pl.Out[pl.Tensor]):
    for t in pl.range(T):
        first = 0
        top = pl.read(probs, [t, 0])
        for e in pl.range(1, E):
            pe = pl.read(probs, [t, e])
            if pe > top:
                top = pe
                first = e
        second = 0
        runner = -1.0
        for e in pl.range(E):
            pe = pl.read(probs, [t, e])
            if e != first:  # noqa: SIM102  (nested, as users write it)
                if pe > runner:
                    runner = pe
                    second = e
        pl.write(idx, [t, 0], pl.cast(first, pl.INT32))
        pl.write(idx, [t, 1], pl.cast(second, pl.INT32))


@pl.jit
def halvings(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    v = pl.read(x, [0])
    n = 1 * 1
    while v > 1.0:
        v = v / 2.0
        n = n + 1
    pl.write(out, [0], pl.cast(n, pl.INT32))


@pl.jit
def pick_scale(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    scale = 1.0 / 4
    if pl.read(x, [0, 0]) > 0.0:
        scale = pl.read(x, [0, 1])
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="scale"):
        y[:, :] = pl.mul(x, scale)


def test_running_maximum_starting_from_a_negative_literal():
    p = np.random.default_rng(1).random((T, E)).astype(np.float32)
    idx = np.full((T, 1), -1, np.int32)
    argmax_rows(p, idx)
    np.testing.assert_array_equal(idx[:, 0], np.argmax(p, 1))
    idx2 = np.full((T, 2), -1, np.int32)
    second_best(p, idx2)
    np.testing.assert_array_equal(idx2, np.argsort(-p, 1)[:, :2])


def test_while_counter_starting_from_a_folded_number():
    out = np.zeros(1, np.int32)
    halvings(np.array([10.0], np.float32), out)
    assert out[0] == 5  # 10 -> 5 -> 2.5 -> 1.25 -> 0.625


def test_folded_number_rebound_in_one_branch():
    x = np.array([[2.0, 3.0], [1.0, -1.0]], np.float32)
    y = np.zeros_like(x)
    pick_scale(x, y)
    np.testing.assert_allclose(y, x * 3.0)
    x[0, 0] = -2.0
    pick_scale(x, y)
    np.testing.assert_allclose(y, x * 0.25)
