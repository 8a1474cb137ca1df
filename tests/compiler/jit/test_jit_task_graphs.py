"""Task graphs (spec pypto-jit §9): manual scopes, deps=/as tid, pl.array of pl.TASK_ID, pl.submit and
task_dummy run in dependency order (program order) on the emulator; a missing edge in a manual scope is
reported at the later task's line instead of being hidden by program order."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import PyptoError
from pypto.runtime import run

ROWS = 4


@pl.jit
def produce_consume(x: pl.Tensor, y: pl.Out[pl.Tensor], z: pl.Out[pl.Tensor]):
    with pl.manual_scope():
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="produce") as t1:
            y[:, :] = pl.muls(x[:, :], 2.0)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="consume", deps=[t1]):
            z[:, :] = pl.adds(y[:, :], 1.0)


@pl.jit
def fan_in(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    tids = pl.array.create(4, pl.TASK_ID)
    with pl.manual_scope():
        for i in pl.range(4):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="part") as tid:
                y[i * ROWS:i * ROWS + ROWS, :] = pl.muls(x[i * ROWS:i * ROWS + ROWS, :], 3.0)
            tids[i] = tid
        join = pl.system.task_dummy(deps=[tids])
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="total", deps=[join]):
            y[:, :] = pl.adds(y[:, :], 1.0)


def test_declared_edges_run_producers_first():
    x = np.random.default_rng(0).standard_normal((16, 16)).astype(np.float32)
    y, z = np.zeros_like(x), np.zeros_like(x)
    produce_consume(x, y, z)
    np.testing.assert_allclose(z, x * 2 + 1, rtol=1e-6)
    y = np.zeros_like(x)
    fan_in(x, y)
    np.testing.assert_allclose(y, x * 3 + 1, rtol=1e-6)


@pl.jit
def missing_edge(x: pl.Tensor, y: pl.Out[pl.Tensor], z: pl.Out[pl.Tensor]):
    with pl.manual_scope():
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="produce"):
            y[:, :] = pl.muls(x[:, :], 2.0)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="consume"):
            z[:, :] = pl.adds(y[:, :], 1.0)


@pl.jit
def nested_manual(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.manual_scope(), pl.scope(mode=pl.ScopeMode.MANUAL), pl.at(level=pl.Level.CORE_GROUP):
        y[:, :] = x[:, :]


def test_missing_edge_and_nested_manual_scope_are_reported_at_the_line():
    x = np.zeros((16, 16), np.float32)
    with pytest.raises(PyptoError) as info:
        missing_edge(x, np.zeros_like(x), np.zeros_like(x))
    line = missing_edge.__wrapped__.__code__.co_firstlineno + 5
    assert f"test_jit_task_graphs.py:{line}:" in str(info.value)
    assert "race: task 'consume' and task 'produce'" in str(info.value) and "'y'" in str(info.value)
    with pytest.raises(PyptoError, match="cannot be nested inside a manual scope"):
        nested_manual(x, np.zeros_like(x))


@pl.program
class Submitted:
    @pl.function(type=pl.FunctionType.InCore)
    def double(self, x: pl.Tensor[[16, 16], pl.FP32],
               y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        y = pl.store(pl.muls(pl.load(x, [0, 0], [16, 16]), 2.0), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.InCore)
    def plus_one(self, y: pl.Tensor[[16, 16], pl.FP32],
                 z: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        z = pl.store(pl.adds(pl.load(y, [0, 0], [16, 16]), 1.0), [0, 0], z)
        return z

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32], z: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        y: pl.Tensor[[16, 16], pl.FP32] = pl.create_tensor([16, 16], dtype=pl.FP32)
        with pl.manual_scope():
            y, t1 = pl.submit(self.double, x, y)
            z, _t2 = pl.submit(self.plus_one, y, z, deps=[t1])
        return z


def test_submit_in_a_program_orders_by_its_deps():
    x = np.random.default_rng(1).standard_normal((16, 16)).astype(np.float32)
    out = run(Submitted, x)
    np.testing.assert_allclose(out.outputs[0], x * 2 + 1, rtol=1e-6)


@pl.jit
def split_region(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.split(pl.SplitMode.UP_DOWN), pl.cross_core_slot(slot_num=4)]):
        y[:, :] = pl.adds(x[:, :], 1.0)


@pl.jit
def bad_slots(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.cross_core_slot(slot_num=0)]):
        y[:, :] = x[:, :]


def test_split_optimizations_are_checked_and_change_no_result():
    x = np.random.default_rng(2).standard_normal((16, 16)).astype(np.float32)
    y = np.zeros_like(x)
    split_region(x, y)
    np.testing.assert_allclose(y, x + 1, rtol=1e-6)
    with pytest.raises(PyptoError, match="slot_num must be a positive integer, got 0"):
        bad_slots(x, np.zeros_like(x))
