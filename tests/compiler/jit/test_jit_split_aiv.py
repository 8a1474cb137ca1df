"""``for lane in pl.split_aiv(2, mode=pl.SplitMode.NONE)`` (spec pypto-jit §4.5): both AIVs of the core
group run the body, each in its lane (``get_subblock_idx`` 0 and 1), and the results they shard by
lane combine in the output; checked against NumPy."""

from __future__ import annotations

import numpy as np

import pypto.language as pl


@pl.jit
def negate_by_lanes(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="lanes"):
        for i in pl.range(2):
            for lane in pl.split_aiv(2, mode=pl.SplitMode.NONE):
                r = (i * 2 + lane) * 16
                pl.store(pl.neg(pl.load(x, [r, 0], [16, 64])), [r, 0], y)


@pl.jit
def negate_on_one_aiv(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="one_lane"):
        for i in pl.range(4):
            pl.store(pl.neg(pl.load(x, [i * 16, 0], [16, 64])), [i * 16, 0], y)


@pl.jit
def blocks_and_lanes(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    for b in pl.spmd(2):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="block_lanes"):
            for lane in pl.split_aiv(2):
                r = (b * 2 + lane) * 16
                pl.store(pl.muls(pl.load(x, [r, 0], [16, 64]), 3.0), [r, 0], y)
                if lane == 0:
                    pl.store(pl.adds(pl.load(x, [b * 16, 64], [16, 64]), 1.0), [b * 16, 64], y)


@pl.jit
def halving_mode(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for _lane in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
            pl.store(pl.neg(pl.load(x, [0, 0], [16, 64])), [0, 0], y)


def _x(cols: int = 64) -> np.ndarray:
    return np.random.default_rng(91).standard_normal((64, cols)).astype(np.float32)


def test_both_aivs_run_their_lane_and_the_halves_combine():
    x = _x()
    y = np.zeros_like(x)
    negate_by_lanes(x, y)
    np.testing.assert_array_equal(y, -x)
    r = negate_by_lanes.last_result
    lanes = sorted(c.id for c in r.cores if c.kind == "aiv" and c.cycles > 0)
    assert lanes == ["AIV0", "AIV1"]
    one = np.zeros_like(x)
    negate_on_one_aiv(x, one)
    np.testing.assert_array_equal(one, -x)
    assert r.cycles < 0.75 * negate_on_one_aiv.last_result.cycles  # half the rows each, side by side


def test_lanes_inside_spmd_blocks_and_a_lane_guarded_side_effect():
    x = _x(128)
    y = np.zeros_like(x)
    blocks_and_lanes(x, y)
    np.testing.assert_array_equal(y[:, :64], 3 * x[:, :64])
    np.testing.assert_array_equal(y[:32, 64:], x[:32, 64:] + 1)
    np.testing.assert_array_equal(y[32:, 64:], 0)
    aivs = {c.id for c in blocks_and_lanes.last_result.cores if c.kind == "aiv"}
    assert len(aivs) == 4  # two core groups, two lanes each


def test_a_halving_mode_splits_the_window_between_the_lanes():
    x = _x()  # was refused by name; the halving modes have their own tests (test_jit_split_aiv_halves)
    y = np.zeros_like(x)
    halving_mode(x, y)
    np.testing.assert_array_equal(y[:16], -x[:16])
    np.testing.assert_array_equal(y[16:], 0)
