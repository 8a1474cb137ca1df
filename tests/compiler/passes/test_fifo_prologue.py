"""A matmul whose left operand element-wise ops compute (``exp(x) @ w``) in one kernel or ``pl.at``
region stays one group kernel (pypto.passes.fifo_prologue): the AIVs compute each chunk of the
operand and push their halves to the cube through the V2C FIFO, the cube pops the joined chunk into
L1; the operand never goes to GM. Checked against NumPy (float64 on the same rounded inputs, the
vector results rounded to FP16 as the kernel does) on ragged shapes, and in the generated .pto."""

from __future__ import annotations

import re

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

import pypto.language as pl


@pl.jit
def exp_then_matmul(x: pl.Tensor, w: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="expmm"):
        y = pl.matmul(pl.exp(x), w, out_dtype=pl.FP32)
    return y


@pl.jit
def biased_relu_operand(x: pl.Tensor, b: pl.Tensor, w: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="prelin"):
        y = pl.matmul(pl.cast(pl.relu(pl.add(x, b)), pl.FP16), w, out_dtype=pl.FP32)
    return y


def _rand(shape: tuple, dtype, seed: int, scale: float = 1.0) -> np.ndarray:
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(dtype)


def _f16(a: np.ndarray) -> np.ndarray:
    return a.astype(np.float16).astype(np.float64)


@settings(max_examples=5, deadline=None)
@example(m=1, k=33, n=5)  # one valid row: the second AIV pushes zeros
@example(m=17, k=130, n=70)  # the second AIV has 1 of its 16 rows
@given(m=st.sampled_from([1, 17, 32, 100]), k=st.sampled_from([1, 33, 130]), n=st.sampled_from([5, 70]))
def test_exp_operand_through_the_v2c_fifo_matches_numpy(m, k, n):
    # ragged chunks: each AIV zeroes the padding it pushes; an AIV without rows pushes zeros
    x, w = _rand((m, k), np.float16, m + k, 0.3), _rand((k, n), np.float16, k + n)
    y = np.zeros((m, n), np.float32)
    exp_then_matmul(x, w, y)
    want = _f16(np.exp(x.astype(np.float32))) @ w.astype(np.float64)
    np.testing.assert_allclose(y, want, rtol=1e-3, atol=1e-3 + 2e-4 * k)
    assert exp_then_matmul.last_result.launches == 1


def test_an_operand_from_a_bias_row_relu_and_cast():
    x, b = _rand((45, 80), np.float32, 1), _rand((1, 80), np.float32, 2)
    w = _rand((80, 24), np.float16, 3)
    y = np.zeros((45, 24), np.float32)
    biased_relu_operand(x, b, w, y)
    want = _f16(np.maximum(x + b, 0)) @ w.astype(np.float64)
    np.testing.assert_allclose(y, want, rtol=1e-3, atol=1e-3)


def test_the_pto_pushes_the_operand_through_the_v2c_fifo():
    x, w = np.zeros((100, 130), np.float16), np.zeros((130, 70), np.float16)
    compiled = exp_then_matmul.compile(x, w, np.zeros((100, 70), np.float32)).compiled
    (text,) = compiled.pto.values()
    cube, vector = text.split("pto.section.vector")
    assert re.search(r"pto\.reserve_buffer \{name = \"v2c_fifo\".*location = #pto\.address_space<mat>", cube)
    assert "pto.tpop_from_aiv" in cube and "pto.tfree_from_aiv {split = 1}" in cube and "tmatmul" in cube
    assert re.search(r"pto\.tpush_to_aic\(%\d+ : .*\) \{split = 1\}", vector) and "texp" in vector
    assert "tfillpad" in vector  # the ragged chunk's padding is zero when it reaches the cube
    assert "texp" not in cube and "tmatmul" not in vector
    # GM arguments x, w, y: no workspace for exp(x)
    assert re.search(r"func\.func @\w+\(%arg0: !pto\.ptr<f16>, %arg1: !pto\.ptr<f16>, %arg2: !pto\.ptr<f32>\)", text)
