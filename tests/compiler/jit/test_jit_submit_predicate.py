"""``pl.submit(self.k, *args, deps=[...], predicate=(t[i] > 0))`` in @pl.program code (spec pypto-jit §9,
§4.3): the task runs only when the element passes the comparison; a skipped task leaves its Out
argument as it was, and the submit's result is then that argument. A plain ``self.k(...)`` call inside
a manual scope is a task as well, so a conflict with no declared edge is a race.
``pl.spmd_submit(self.k, *args, core_num=N, ...)`` is the same task launched as N blocks."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import PyptoError
from pypto.runtime import run

F = pl.FP32


@pl.program
class Gated:
    @pl.function(type=pl.FunctionType.InCore)
    def double(self, x: pl.Tensor[[16, 16], F], y: pl.Out[pl.Tensor[[16, 16], F]]) -> pl.Tensor[[16, 16], F]:
        y = pl.store(pl.muls(pl.load(x, [0, 0], [16, 16]), 2.0), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.InCore)
    def plus_one(self, y: pl.Tensor[[16, 16], F], z: pl.Out[pl.Tensor[[16, 16], F]]) -> pl.Tensor[[16, 16], F]:
        z = pl.store(pl.adds(pl.load(y, [0, 0], [16, 16]), 1.0), [0, 0], z)
        return z

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], F], flags: pl.Tensor[[2], pl.INT32],
             y: pl.InOut[pl.Tensor[[16, 16], F]], z: pl.Out[pl.Tensor[[16, 16], F]]) -> pl.Tensor[[16, 16], F]:
        with pl.manual_scope():
            y, t1 = pl.submit(self.double, x, y, predicate=(flags[0] > 0))
            z, _t2 = pl.submit(self.plus_one, y, z, deps=[t1], predicate=(flags[1] == 3))
        return z


@pytest.mark.parametrize("flags, first, second", [((1, 3), True, True), ((0, 3), False, True),
                                                  ((4, 2), True, False), ((0, 0), False, False)])
def test_a_submitted_task_runs_only_when_its_predicate_holds(flags, first, second):
    x = np.random.default_rng(81).standard_normal((16, 16)).astype(np.float32)
    y0 = np.full((16, 16), 5.0, np.float32)
    y, z = y0.copy(), np.full((16, 16), -1.0, np.float32)
    run(Gated, x, np.array(flags, np.int32), y, z)
    want_y = 2 * x if first else y0
    np.testing.assert_allclose(y, want_y, rtol=1e-6)
    np.testing.assert_allclose(z, want_y + 1 if second else -1.0, rtol=1e-6)


def _racy(declare: bool) -> None:
    @pl.program
    class Racy:
        @pl.function(type=pl.FunctionType.InCore)
        def double(self, x: pl.Tensor[[16, 16], F], y: pl.Out[pl.Tensor[[16, 16], F]]) -> pl.Tensor[[16, 16], F]:
            y = pl.store(pl.muls(pl.load(x, [0, 0], [16, 16]), 2.0), [0, 0], y)
            return y

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[16, 16], F], flags: pl.Tensor[[1], pl.INT32],
                 y: pl.Out[pl.Tensor[[16, 16], F]]) -> pl.Tensor[[16, 16], F]:
            with pl.manual_scope():
                if declare:
                    y, t1 = pl.submit(self.double, x, y)
                    y, _t2 = pl.submit(self.double, x, y, deps=[t1], predicate=(flags[0] > 0))
                else:
                    y = self.double(x, y)
                    y, _t2 = pl.submit(self.double, x, y, predicate=(flags[0] > 0))
            return y


def test_a_plain_kernel_call_in_a_manual_scope_is_race_checked():
    _racy(True)
    with pytest.raises(PyptoError, match=r"race: task 'double' and task 'double' \(line \d+\) both use tensor 'y'"):
        _racy(False)


def test_a_bad_predicate_is_an_error_at_its_line():
    with pytest.raises(PyptoError, match=r"test_jit_submit_predicate.py:\d+:\d+: error: pl.submit\(predicate=...\) "
                       "takes one comparison"):
        @pl.program
        class Bad:
            @pl.function(type=pl.FunctionType.InCore)
            def double(self, x: pl.Tensor[[16, 16], F], y: pl.Out[pl.Tensor[[16, 16], F]]) -> pl.Tensor[[16, 16], F]:
                y = pl.store(pl.muls(pl.load(x, [0, 0], [16, 16]), 2.0), [0, 0], y)
                return y

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: pl.Tensor[[16, 16], F], y: pl.Out[pl.Tensor[[16, 16], F]]) -> pl.Tensor[[16, 16], F]:
                y, _t = pl.submit(self.double, x, y, predicate=(x[0, 0] > 0.5))
                return y


@pl.program
class Blocks:
    @pl.function(type=pl.FunctionType.InCore)
    def rows(self, x: pl.Tensor[[64, 32], F], y: pl.Out[pl.Tensor[[64, 32], F]]) -> pl.Tensor[[64, 32], F]:
        b = pl.tile.get_block_idx()
        y = pl.store(pl.muls(pl.load(x, [b * 16, 0], [16, 32]), 3.0), [b * 16, 0], y)
        return y

    @pl.function(type=pl.FunctionType.InCore)
    def plus_one(self, y: pl.Tensor[[64, 32], F], z: pl.Out[pl.Tensor[[64, 32], F]]) -> pl.Tensor[[64, 32], F]:
        z = pl.store(pl.adds(pl.load(y, [0, 0], [64, 32]), 1.0), [0, 0], z)
        return z

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 32], F], flags: pl.Tensor[[1], pl.INT32],
             y: pl.Out[pl.Tensor[[64, 32], F]], z: pl.Out[pl.Tensor[[64, 32], F]]) -> pl.Tensor[[64, 32], F]:
        with pl.manual_scope():
            y, t1 = pl.spmd_submit(self.rows, x, y, core_num=4, sync_start=True)
            z, _t2 = pl.spmd_submit(self.plus_one, y, z, core_num=1, deps=[t1], predicate=(flags[0] > 0))
        return z


@pytest.mark.parametrize("flag", [1, 0])
def test_spmd_submit_launches_the_kernel_as_blocks(flag):
    x = np.random.default_rng(82).standard_normal((64, 32)).astype(np.float32)
    y, z = np.zeros_like(x), np.full_like(x, -1.0)
    out = run(Blocks, x, np.array([flag], np.int32), y, z)
    np.testing.assert_allclose(y, 3 * x, rtol=1e-6)  # every block did its 16 rows
    np.testing.assert_allclose(z, 3 * x + 1 if flag else -1.0, rtol=1e-6)
    assert out.launches == 1 + flag
    assert len({c.id for c in out.cores if c.kind == "aiv" and c.cycles > 0}) == 4  # the 4 blocks of rows
