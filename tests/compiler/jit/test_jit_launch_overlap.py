"""A program's cycles are its launches' schedule on the chip (pypto.runtime.timeline): independent
launches overlap on free cores, dependent ones run one after another."""

from __future__ import annotations

import numpy as np

import pypto.language as pl


@pl.jit.incore
def negate_rows(a: pl.Tensor, b: pl.Out[pl.Tensor]):
    b[:, :] = pl.neg(a[:, :])
    return b


@pl.jit
def negate_halves(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    for r in pl.range(0, 64, 32):
        negate_rows(x[r:r + 32, :], y[r:r + 32, :])


@pl.jit
def negate_twice(x: pl.Tensor, y: pl.Out[pl.Tensor], z: pl.Out[pl.Tensor]):
    negate_rows(x, y)
    negate_rows(y, z)


def test_launches_on_disjoint_views_overlap():
    x = np.random.default_rng(61).standard_normal((64, 64)).astype(np.float32)
    y = np.zeros_like(x)
    negate_halves(x, y)
    r = negate_halves.last_result
    np.testing.assert_array_equal(y, -x)
    assert r.launches == 2 and len(r.cores) == 2
    per_launch = [c.cycles for c in r.cores]
    assert r.cycles == max(per_launch) < sum(per_launch)


def test_a_launch_reading_what_another_wrote_waits_for_it():
    x = np.random.default_rng(62).standard_normal((32, 64)).astype(np.float32)
    y, z = np.zeros_like(x), np.zeros_like(x)
    negate_twice(x, y, z)
    r = negate_twice.last_result
    np.testing.assert_array_equal(z, x)
    assert r.launches == 2 and r.cycles == sum(c.cycles for c in r.cores)
