"""``pl.spmd(n, predicate=(t[i] > 0))`` (spec pypto-jit §4.3): the launch runs only when the element
passes the comparison; a false predicate completes the task without running it."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import PyptoError


@pl.jit
def negate_if_enabled(x: pl.Tensor, flags: pl.Tensor, y: pl.Out[pl.Tensor]):
    for b in pl.spmd(2, predicate=(flags[0] > 0)):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="negate_half"):
            pl.store(pl.neg(pl.load(x, [b * 16, 0], [16, 32])), [b * 16, 0], y)
    with pl.spmd(2, predicate=(flags[1] == 3)):  # noqa: SIM117 -- the dispatch form under test
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="double_half"):
            b = pl.get_block_idx()
            pl.store(pl.muls(pl.load(x, [b * 16, 0], [16, 32]), 2.0), [b * 16, 32], y)


@pl.jit
def bad_predicate(x: pl.Tensor, flags: pl.Tensor, y: pl.Out[pl.Tensor]):
    for b in pl.spmd(2, predicate=(flags[0] > 0.5)):
        with pl.at(level=pl.Level.CORE_GROUP):
            pl.store(pl.neg(pl.load(x, [b * 16, 0], [16, 32])), [b * 16, 0], y)


@pytest.mark.parametrize("flags, first, second", [((1, 3), True, True), ((0, 3), False, True),
                                                  ((5, 2), True, False), ((-1, 0), False, False)])
def test_a_launch_runs_only_when_its_predicate_holds(flags, first, second):
    x = np.random.default_rng(71).standard_normal((32, 32)).astype(np.float32)
    y = np.full((32, 64), 7.0, np.float32)
    negate_if_enabled(x, np.array(flags, np.int32), y)
    np.testing.assert_array_equal(y[:, :32], -x if first else 7.0)
    np.testing.assert_array_equal(y[:, 32:], 2 * x if second else 7.0)
    assert negate_if_enabled.last_result.launches == first + second


def test_a_predicate_that_is_not_an_element_against_an_int_is_an_error_at_the_line():
    x = np.ones((32, 32), np.float32)
    line = bad_predicate.__wrapped__.__code__.co_firstlineno + 2
    with pytest.raises(PyptoError, match=rf"test_jit_spmd_predicate.py:{line}:\d+: .*integer literal"):
        bad_predicate(x, np.zeros(2, np.int32), np.zeros((32, 32), np.float32))
