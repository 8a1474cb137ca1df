"""FuseLoops (seed 003 §3.6): relu(softmax(x)) written as two composites runs as one tile loop with the
intermediate on chip, whichever way the composites were written; illegal pairs are left alone with the
reason in the pass log and the pass dump."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
import pypto.runtime
from pypto import ir
from pypto.passes.fuse_loops import FuseLoopsPass
from pypto.passes.manager import PassManager

ROWS, COLS, BLK = 64, 64, 16


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@pl.inline
def softmax_rows(src, dst):
    for r in pl.range(0, ROWS, BLK):
        a = pl.load(src, [r, 0], [BLK, COLS])
        scratch = pl.create_tile([BLK, COLS], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)
        m = pl.row_max(a, scratch)
        e = pl.exp(pl.row_expand_sub(a, m))
        s = pl.row_sum(e, scratch)
        dst = pl.store(pl.row_expand_div(e, s), [r, 0], dst)
    return dst


@pl.inline
def relu_rows(src2, dst2):
    for r2 in pl.range(0, ROWS, BLK):
        b = pl.load(src2, [r2, 0], [BLK, COLS])
        dst2 = pl.store(pl.relu(b), [r2, 0], dst2)
    return dst2


@pl.inline
def relu_rows_by_32(src3, dst3):
    for r3 in pl.range(0, ROWS, 32):
        c = pl.load(src3, [r3, 0], [32, COLS])
        dst3 = pl.store(pl.relu(c), [r3, 0], dst3)
    return dst3


@pl.inline
def relu_rows_flipped(src4, dst4):
    for r4 in pl.range(0, ROWS, BLK):
        d = pl.load(src4, [ROWS - BLK - r4, 0], [BLK, COLS])
        dst4 = pl.store(pl.relu(d), [r4, 0], dst4)
    return dst4


T = pl.Tensor[[ROWS, COLS], pl.FP32]


@pl.program
class TwoKernels:
    @pl.function(type=pl.FunctionType.InCore)
    def softmax_k(self, x: T, y: pl.Out[T]) -> T:
        y = softmax_rows(x, y)
        return y

    @pl.function(type=pl.FunctionType.InCore)
    def relu_k(self, x: T, y: pl.Out[T]) -> T:
        y = relu_rows(x, y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: T) -> T:
        t: T = pl.create_tensor([ROWS, COLS], dtype=pl.FP32)
        t = self.softmax_k(x, t)
        y: T = pl.create_tensor([ROWS, COLS], dtype=pl.FP32)
        y = self.relu_k(t, y)
        return y


@pl.program
class TwoScopes:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: T) -> T:
        t: T = pl.create_tensor([ROWS, COLS], dtype=pl.FP32)
        y: T = pl.create_tensor([ROWS, COLS], dtype=pl.FP32)
        with pl.incore():
            t = softmax_rows(x, t)
        with pl.incore():
            y = relu_rows(t, y)
        return y


@pl.program
class TwoInlines:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: T, t: pl.Out[T], y: pl.Out[T]) -> T:
        t = softmax_rows(x, t)
        y = relu_rows(t, y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: T) -> T:
        t: T = pl.create_tensor([ROWS, COLS], dtype=pl.FP32)
        y: T = pl.create_tensor([ROWS, COLS], dtype=pl.FP32)
        y = self.k(x, t, y)
        return y


def _log(program) -> list[str]:
    pm = PassManager.get_strategy()
    pm.passes = pm.passes[:[type(p) for p in pm.passes].index(FuseLoopsPass) + 1]  # up to FuseLoops
    pm.run_passes(program)
    assert isinstance(pm.passes[-1], FuseLoopsPass)
    return pm.passes[-1].log


def _x() -> np.ndarray:
    return np.random.default_rng(7).standard_normal((ROWS, COLS)).astype(np.float32)


@pytest.mark.parametrize("program", [TwoKernels, TwoScopes, TwoInlines], ids=["kernels", "scopes", "inline"])
def test_relu_of_softmax_runs_as_one_loop_without_the_intermediate_in_gm(program):
    x = _x()
    r = pypto.runtime.run(program, x)
    np.testing.assert_allclose(r.outputs[0], np.maximum(_softmax(x), 0), rtol=1e-5, atol=1e-6)
    trips = ROWS // BLK
    assert r.launches == 1
    # one load of x and one store of y per tile: the intermediate is neither stored nor loaded
    assert r.pipes["MTE2"].instructions == trips
    assert r.pipes["MTE3"].instructions == trips
    assert any("fused the loops" in line for line in _log(program))


def test_the_unfused_program_moves_the_intermediate_through_gm():
    x = _x()
    pm = PassManager.get_strategy()
    assert any(isinstance(p, FuseLoopsPass) for p in pm.passes)
    fused = pypto.runtime.run(TwoKernels, x)
    from pypto.passes import manager
    saved = manager.STRATEGIES[manager.OptimizationStrategy.Default]
    manager.STRATEGIES[manager.OptimizationStrategy.Default] = tuple(p for p in saved if p is not FuseLoopsPass)
    try:
        unfused = pypto.runtime.run(TwoKernels, x)
    finally:
        manager.STRATEGIES[manager.OptimizationStrategy.Default] = saved
    np.testing.assert_array_equal(fused.outputs[0], unfused.outputs[0])
    assert unfused.launches == 2
    assert unfused.pipes["MTE2"].instructions == 2 * fused.pipes["MTE2"].instructions
    assert unfused.pipes["MTE3"].instructions == 2 * fused.pipes["MTE3"].instructions


def _refused(consumer, returns_intermediate: bool = False):
    """A program whose kernel runs softmax_rows then ``consumer`` over the intermediate t."""
    if returns_intermediate:
        @pl.program
        class Refused:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: T, t: pl.Out[T], y: pl.Out[T]) -> tuple[T, T]:
                t = softmax_rows(x, t)
                y = consumer(t, y)
                return t, y
        return Refused

    @pl.program
    class Refused:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: T, t: pl.Out[T], y: pl.Out[T]) -> T:
            t = softmax_rows(x, t)
            y = consumer(t, y)
            return y

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: T) -> T:
            t: T = pl.create_tensor([ROWS, COLS], dtype=pl.FP32)
            y: T = pl.create_tensor([ROWS, COLS], dtype=pl.FP32)
            y = self.k(x, t, y)
            return y
    return Refused


@pytest.mark.parametrize("consumer, reason", [
    (relu_rows_by_32, "different iteration spaces (range(0, 64, 16) vs range(0, 64, 32): different tiling)"),
    (relu_rows_flipped, "needs the whole intermediate, or other tiles of it, first"),
], ids=["different-tiling", "other-tiles-first"])
def test_illegal_pairs_are_left_alone_with_the_reason(consumer, reason, tmp_path):
    program = _refused(consumer)
    log = _log(program)
    assert len(log) == 1 and "not fused" in log[0] and reason in log[0], log
    ir.compile(program, output_dir=str(tmp_path), dump_passes=True)
    dump = next((tmp_path / "passes_dump").glob("*_after_FuseLoops.py")).read_text()
    assert reason in dump.splitlines()[0]
    x = _x()
    r = pypto.runtime.run(program, x)
    sm = _softmax(x)
    want = np.maximum(sm[::-1].reshape(ROWS // BLK, BLK, COLS)[:, ::-1].reshape(ROWS, COLS), 0) \
        if consumer is relu_rows_flipped else np.maximum(sm, 0)
    np.testing.assert_allclose(r.outputs[0], want, rtol=1e-5, atol=1e-6)
    assert r.pipes["MTE3"].instructions > ROWS // BLK  # the intermediate still goes through GM


def test_an_intermediate_the_caller_reads_is_a_second_consumer():
    program = _refused(relu_rows, returns_intermediate=True)
    log = _log(program)
    assert len(log) == 1 and "second consumer" in log[0], log


def test_a_second_kernel_reading_the_intermediate_keeps_the_launches_apart():
    @pl.program
    class SecondReader:
        @pl.function(type=pl.FunctionType.InCore)
        def softmax_k(self, x: T, y: pl.Out[T]) -> T:
            y = softmax_rows(x, y)
            return y

        @pl.function(type=pl.FunctionType.InCore)
        def relu_k(self, x: T, y: pl.Out[T]) -> T:
            y = relu_rows(x, y)
            return y

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: T) -> tuple[T, T]:
            t: T = pl.create_tensor([ROWS, COLS], dtype=pl.FP32)
            t = self.softmax_k(x, t)
            y: T = pl.create_tensor([ROWS, COLS], dtype=pl.FP32)
            y = self.relu_k(t, y)
            z: T = pl.create_tensor([ROWS, COLS], dtype=pl.FP32)
            z = self.relu_k(t, z)
            return y, z

    log = _log(SecondReader)
    assert any("not merged" in line and "second consumer" in line for line in log), log
    x = _x()
    r = pypto.runtime.run(SecondReader, x)
    assert r.launches == 3
    np.testing.assert_allclose(r.outputs[1], np.maximum(_softmax(x), 0), rtol=1e-5, atol=1e-6)


def test_a_reduction_the_consumer_needs_whole_is_not_fused():
    @pl.program
    class ColumnScale:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: T, y: pl.Out[T]) -> T:
            acc0 = pl.block.full([BLK, COLS], dtype=pl.FP32, value=0.0)
            for r, (acc,) in pl.range(0, ROWS, BLK, init_values=(acc0,)):
                a = pl.load(x, [r, 0], [BLK, COLS])
                acc_next = pl.yield_(pl.add(acc, a))
            for r2 in pl.range(0, ROWS, BLK):
                b = pl.load(x, [r2, 0], [BLK, COLS])
                y = pl.store(pl.mul(b, acc_next), [r2, 0], y)
            return y

    log = _log(ColumnScale)
    assert len(log) == 1 and "only has after its last iteration" in log[0], log
    x = _x()
    r = pypto.runtime.run(ColumnScale, x)
    want = x * x.reshape(ROWS // BLK, BLK, COLS).sum(axis=0)[np.arange(ROWS) % BLK]
    np.testing.assert_allclose(r.outputs[0], want, rtol=1e-5, atol=1e-5)


def _straight_pair(rows: int, cols: int):
    """Two InCore kernels of straight-line tile code (no loop): exp(x), then + b."""
    t_ = pl.Tensor[[rows, cols], pl.FP32]

    @pl.program
    class Straight:
        @pl.function(type=pl.FunctionType.InCore)
        def ex(self, x: t_, t: pl.Out[t_]) -> t_:
            return pl.store(pl.exp(pl.load(x, [0, 0], [rows, cols])), [0, 0], t)

        @pl.function(type=pl.FunctionType.InCore)
        def add_bias(self, x: t_, b: t_, y: pl.Out[t_]) -> t_:
            return pl.store(pl.add(pl.load(x, [0, 0], [rows, cols]), pl.load(b, [0, 0], [rows, cols])), [0, 0], y)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: t_, b: t_) -> t_:
            t: t_ = pl.create_tensor([rows, cols], dtype=pl.FP32)
            t = self.ex(x, t)
            y: t_ = pl.create_tensor([rows, cols], dtype=pl.FP32)
            y = self.add_bias(t, b, y)
            return y

    return Straight


@pytest.mark.parametrize("rows, cols", [(16, 64), (8, 8)])
def test_two_straight_line_kernels_fuse_block_by_block(rows, cols):
    program = _straight_pair(rows, cols)
    log = _log(program)
    assert any("fused the unrolled tile blocks" in line for line in log), log
    rng = np.random.default_rng(1)
    x, b = (rng.standard_normal((rows, cols)).astype(np.float32) for _ in range(2))
    r = pypto.runtime.run(program, x, b)
    np.testing.assert_allclose(r.outputs[0], np.exp(x) + b, rtol=1e-5, atol=1e-6)
    assert r.launches == 1
    assert r.pipes["MTE3"].instructions == 1 and r.pipes["MTE2"].instructions == 2
