"""``pl.spmd(n, predicate=(t[i] > 0))`` (spec pypto-jit §4.3): the launch runs only when the element
passes the comparison; a false predicate completes the task without running it. The element is read
when the task becomes ready, so in a manual scope its producer must be in deps= (else: a race)."""

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


@pl.jit
def predicate_on_a_produced_flag(x: pl.Tensor, flags: pl.InOut[pl.Tensor], y: pl.Out[pl.Tensor], ordered: bool):
    with pl.manual_scope():
        if ordered:
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="set_flag") as t1:
                flags[:, :] = pl.adds(flags[:, :], 1)
            for b in pl.spmd(2, predicate=(flags[0, 0] > 0)):
                with pl.at(level=pl.Level.CORE_GROUP, name_hint="gated", deps=[t1]):
                    pl.store(pl.neg(pl.load(x, [b * 16, 0], [16, 32])), [b * 16, 0], y)
        else:
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="set_flag"):
                flags[:, :] = pl.adds(flags[:, :], 1)
            for b in pl.spmd(2, predicate=(flags[0, 0] > 0)):
                with pl.at(level=pl.Level.CORE_GROUP, name_hint="gated"):
                    pl.store(pl.neg(pl.load(x, [b * 16, 0], [16, 32])), [b * 16, 0], y)


def test_a_predicate_reads_its_element_when_ready_so_its_producer_needs_an_edge():
    x = np.random.default_rng(72).standard_normal((32, 32)).astype(np.float32)
    y = np.zeros_like(x)
    flags = np.zeros((1, 8), np.int32)
    predicate_on_a_produced_flag(x, flags, y, True)  # the flag becomes 1 before the launch reads it
    np.testing.assert_array_equal(y, -x)
    with pytest.raises(PyptoError, match=r"race: task 'gated' and task 'set_flag' .* tensor 'flags'"):
        predicate_on_a_produced_flag(x, np.zeros((1, 8), np.int32), np.zeros_like(x), False)
