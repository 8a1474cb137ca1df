"""A kernel whose Out parameter is rebound by a tensor-level op (``y = pl.relu(x); return y``) must
write the caller's buffer (spec pypto-jit §2.7: a callee's Out parameter *is* the caller's tensor).
ExpandLibraryOps / ConvertTensorToBlockOps stored the result into a fresh ``out_<k>`` tensor the call
site allocates, so the write reached the caller only when the caller rebound the call's result
(``y = k(x, y)``); called as a statement, or with a view, the Out buffer kept its old contents (a
silent wrong number). The value is now stored into the parameter itself."""

from __future__ import annotations

import numpy as np

import pypto.language as pl
from pypto.runtime import run


@pl.jit.incore
def relu_bias(x: pl.Tensor, b: pl.Tensor, y: pl.Out[pl.Tensor]):
    y = pl.relu(pl.add(x, b))
    return y


@pl.jit
def rebinding_call(x: pl.Tensor, b: pl.Tensor, y: pl.Out[pl.Tensor]):
    y = relu_bias(x, b, y)
    return y


@pl.jit
def statement_call(x: pl.Tensor, b: pl.Tensor, y: pl.Out[pl.Tensor]):
    relu_bias(x, b, y)


@pl.jit
def per_row_block_views(x: pl.Tensor, b: pl.Tensor, y: pl.Out[pl.Tensor]):
    for r in pl.range(0, x.shape[0], 32):
        relu_bias(x[r:r + 32, :], b, y[r:r + 32, :])


def _inputs(rows: int) -> tuple:
    rng = np.random.default_rng(60)
    return rng.standard_normal((rows, 80)).astype(np.float32), rng.standard_normal((1, 80)).astype(np.float32)


def test_result_rebound_by_the_caller_reaches_the_out_buffer():
    x, b = _inputs(32)
    y = np.zeros_like(x)
    rebinding_call(x, b, y)
    np.testing.assert_allclose(y, np.maximum(x + b, 0), rtol=1e-6)


def test_kernel_called_as_a_statement_writes_its_out_parameter():
    x, b = _inputs(32)
    y = np.zeros_like(x)
    statement_call(x, b, y)
    np.testing.assert_allclose(y, np.maximum(x + b, 0), rtol=1e-6)


def test_kernel_called_with_views_writes_the_windows_of_the_base():
    x, b = _inputs(64)
    y = np.zeros_like(x)
    per_row_block_views(x, b, y)
    np.testing.assert_allclose(y, np.maximum(x + b, 0), rtol=1e-6)


@pl.program
class StatementCall:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[32, 80], pl.FP32], y: pl.Out[pl.Tensor[[32, 80], pl.FP32]]) -> pl.Tensor[[32, 80], pl.FP32]:
        y = pl.relu(x)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[32, 80], pl.FP32], y: pl.Out[pl.Tensor[[32, 80], pl.FP32]]):
        self.k(x, y)


def test_program_form_statement_call_writes_the_out_parameter():
    x, _ = _inputs(32)
    r = run(StatementCall, x, np.zeros_like(x))
    np.testing.assert_allclose(r.arrays["y"], np.maximum(x, 0), rtol=1e-6)


@pl.jit.incore
def project_relu(x: pl.Tensor, w: pl.Tensor, y: pl.Out[pl.Tensor]):
    y = pl.matmul(x, w, out_dtype=pl.FP32)
    return y


@pl.jit
def matmul_per_row_block(x: pl.Tensor, w: pl.Tensor, y: pl.Out[pl.Tensor]):
    for r in pl.range(0, x.shape[0], 32):
        project_relu(x[r:r + 32, :], w, y[r:r + 32, :])


def test_matmul_kernel_called_with_views_writes_the_windows_of_the_base():
    rng = np.random.default_rng(65)
    x, w = rng.standard_normal((64, 48)).astype(np.float16), rng.standard_normal((48, 40)).astype(np.float16)
    y = np.zeros((64, 40), np.float32)
    matmul_per_row_block(x, w, y)
    np.testing.assert_allclose(y, x.astype(np.float32) @ w.astype(np.float32), rtol=1e-3, atol=1e-3)
