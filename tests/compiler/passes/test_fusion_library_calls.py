"""FuseLoops on pypto.lib calls (issue 12): consecutive library calls in one kernel over the same shape
share the tiling plan, their grid loops fuse piece by piece (full blocks, tails, one-block tensors),
the intermediate stays on chip and has no GM workspace parameter; illegal pairs keep it, with the
reason in the pass log."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
import pypto.runtime
from pypto.dtype import DataType
from pypto.enums import FunctionType
from pypto.ir.compiler import compile_program
from pypto.lib import tiling
from pypto.passes.fuse_loops import FuseLoopsPass
from pypto.passes.manager import PassManager


def _exp_add(rows: int, cols: int):
    t_ = pl.Tensor[[rows, cols], pl.FP32]

    @pl.program
    class ExpAdd:
        @pl.function(type=pl.FunctionType.InCore)
        def kern(self, x: t_, b: t_) -> t_:
            y = pl.exp(x)
            z = pl.add(y, b)
            return z

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: t_, b: t_) -> t_:
            z = self.kern(x, b)
            return z

    return ExpAdd


def _relu_softmax_plus(rows: int, cols: int):
    """Three library calls: relu(softmax(x)) + b."""
    t_ = pl.Tensor[[rows, cols], pl.FP32]

    @pl.program
    class ReluSoftmaxPlus:
        @pl.function(type=pl.FunctionType.InCore)
        def kern(self, x: t_, b: t_) -> t_:
            s = pl.softmax(x)
            r = pl.relu(s)
            z = pl.add(r, b)
            return z

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: t_, b: t_) -> t_:
            z = self.kern(x, b)
            return z

    return ReluSoftmaxPlus


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _log(program) -> list[str]:
    pm = PassManager.get_strategy()
    pm.passes = pm.passes[:[type(p) for p in pm.passes].index(FuseLoopsPass) + 1]
    pm.run_passes(program)
    return pm.passes[-1].log


def _kernel(program):
    out = compile_program(program, with_cpp=False).program
    return next(f for f in out.functions_list if f.type is FunctionType.InCore)


def _inputs(rows: int, cols: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(rows * 1000 + cols)
    return tuple(rng.standard_normal((rows, cols)).astype(np.float32) for _ in range(2))


def _blocks(rows: int, cols: int) -> int:
    p = tiling.plan(rows, cols, [DataType.FP32])
    return -(-rows // p.tr) * -(-cols // p.tc)


# 1 x 7 and 64 x 64: one block (no loop); 100 x 130: full blocks and a row tail; 300 x 1030: rows wider
# than a tile (column chunks and a column tail); 512 x 128: full blocks only
@pytest.mark.parametrize("rows, cols", [(1, 7), (64, 64), (100, 130), (300, 1030), (512, 128)])
def test_exp_then_add_is_one_loop_without_a_workspace(rows, cols):
    program = _exp_add(rows, cols)
    log = _log(program)
    assert len(log) == 1 and "fused the loops" in log[0] and "stays on chip" in log[0], log
    kern = _kernel(program)
    assert [p.name for p in kern.params] == ["x", "b", "out_1"]  # no ws_0 for the intermediate
    x, b = _inputs(rows, cols)
    r = pypto.runtime.run(program, x, b)
    np.testing.assert_allclose(r.outputs[0], np.exp(x) + b, rtol=1e-5, atol=1e-6)
    n = _blocks(rows, cols)
    assert r.pipes["MTE2"].instructions == 2 * n  # x and b once per block: exp(x) is never read back
    assert r.pipes["MTE3"].instructions == n  # only z is stored


@pytest.mark.parametrize("rows, cols", [(1, 7), (37, 130), (100, 64)])
def test_relu_of_softmax_plus_bias_fuses_three_calls(rows, cols):
    program = _relu_softmax_plus(rows, cols)
    log = _log(program)
    assert len(log) == 2 and all("fused the loops" in line for line in log), log
    assert [p.name for p in _kernel(program).params] == ["x", "b", "out_2"]
    x, b = _inputs(rows, cols)
    r = pypto.runtime.run(program, x, b)
    np.testing.assert_allclose(r.outputs[0], np.maximum(_softmax(x), 0) + b, rtol=1e-5, atol=1e-6)
    n = _blocks(rows, cols)
    assert r.pipes["MTE2"].instructions == 2 * n  # x once per block for softmax's two statistics and output
    assert r.pipes["MTE3"].instructions == n


def test_an_intermediate_the_kernel_returns_stays_in_gm():
    t_ = pl.Tensor[[100, 130], pl.FP32]

    @pl.program
    class Both:
        @pl.function(type=pl.FunctionType.InCore)
        def kern(self, x: t_, b: t_) -> tuple[t_, t_]:
            y = pl.exp(x)
            z = pl.add(y, b)
            return y, z

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: t_, b: t_) -> tuple[t_, t_]:
            y, z = self.kern(x, b)
            return y, z

    log = _log(Both)
    assert len(log) == 1 and "not fused" in log[0] and "read after the kernel" in log[0], log
    x, b = _inputs(100, 130)
    r = pypto.runtime.run(Both, x, b)
    np.testing.assert_allclose(r.outputs[0], np.exp(x), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(r.outputs[1], np.exp(x) + b, rtol=1e-5, atol=1e-6)


W_ROWS, W_COLS = 37, 6000  # a row does not fit one tile: softmax walks the columns itself
_T = pl.Tensor[[W_ROWS, W_COLS], pl.FP32]
_W = pl.Tensor[[W_COLS], pl.FP32]


@pl.program
class WideReluSoftmax:
    @pl.function(type=pl.FunctionType.InCore)
    def kern(self, x: _T, b: _T, w: _W) -> _T:
        s = pl.softmax(x)
        r = pl.relu(s)
        return r

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: _T, b: _T, w: _W) -> _T:
        r = self.kern(x, b, w)
        return r


@pl.program
class WideSoftmaxBias:
    @pl.function(type=pl.FunctionType.InCore)
    def kern(self, x: _T, b: _T, w: _W) -> _T:
        s = pl.softmax(x)
        r = pl.add(s, b)
        return r

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: _T, b: _T, w: _W) -> _T:
        r = self.kern(x, b, w)
        return r


@pl.program
class WideRmsNormMul:
    @pl.function(type=pl.FunctionType.InCore)
    def kern(self, x: _T, b: _T, w: _W) -> _T:
        s = pl.rms_norm(x, w, eps=1e-6)
        r = pl.mul(s, b)
        return r

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: _T, b: _T, w: _W) -> _T:
        r = self.kern(x, b, w)
        return r


@pl.program
class WideExpSoftmax:
    @pl.function(type=pl.FunctionType.InCore)
    def kern(self, x: _T, b: _T, w: _W) -> _T:
        s = pl.exp(x)
        r = pl.softmax(s)
        return r

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: _T, b: _T, w: _W) -> _T:
        r = self.kern(x, b, w)
        return r


def _rms(x: np.ndarray) -> np.ndarray:
    return x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + 1e-6)


@pytest.mark.parametrize("program, want", [
    (WideReluSoftmax, lambda x, b: np.maximum(_softmax(x), 0)),
    (WideSoftmaxBias, lambda x, b: _softmax(x) + b),
    (WideRmsNormMul, lambda x, b: _rms(x) * b),
])
def test_a_composite_over_column_chunks_takes_the_next_op_into_its_output_pass(program, want):
    """Rows wider than a tile (softmax walks the columns for each statistic, then for its output): the
    element-wise op after it runs in the output pass, chunk by chunk, and its input never reaches GM
    (was refused: 'different loop nests')."""
    log = _log(program)
    assert len(log) == 1 and "fused the loops" in log[0] and "stays on chip" in log[0], log
    assert [p.name for p in _kernel(program).params] == ["x", "b", "w", "out_1"]
    x, b = _inputs(W_ROWS, W_COLS)
    r = pypto.runtime.run(program, x, b, np.ones(W_COLS, np.float32))
    np.testing.assert_allclose(r.outputs[0], want(x, b), rtol=1e-5, atol=1e-6)
    assert r.pipes["MTE3"].instructions == _blocks(W_ROWS, W_COLS)  # only the result is stored


def test_an_element_wise_op_before_a_two_level_composite_is_not_fused():
    """softmax(exp(x)) over wide rows: softmax's statistics need whole rows of exp(x) before its first
    output, so exp's result goes through GM, with the reason in the log."""
    program = WideExpSoftmax
    log = _log(program)
    assert len(log) == 1 and "not fused" in log[0] and "statistics need whole rows" in log[0], log
    x, b = _inputs(W_ROWS, W_COLS)
    x = x * 0.1
    r = pypto.runtime.run(program, x, b, np.ones(W_COLS, np.float32))
    np.testing.assert_allclose(r.outputs[0], _softmax(np.exp(x)), rtol=1e-5, atol=1e-8)
