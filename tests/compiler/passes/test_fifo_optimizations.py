"""``optimizations=[pl.split(mode), pl.cross_core_slot(slot_num=n)]`` of a ``pl.at`` region that
SplitCubeVector keeps as one group kernel (spec pypto-jit §4.1): the C2V epilogue form splits each
pushed block between the AIVs by columns under LEFT_RIGHT and sizes its ring by ``slot_num``; what a
form cannot honour is a located error. Results equal the unsplit region (NumPy), the .pto shows the
split and the depth."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import pypto.language as pl
from pypto.errors import CompileError, PyptoTypeError

LEFT_RIGHT, UP_DOWN = pl.SplitMode.LEFT_RIGHT, pl.SplitMode.UP_DOWN


@pl.jit
def linear_relu_columns(x: pl.Tensor, w: pl.Tensor, b: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="linear_lr",
               optimizations=[pl.split(LEFT_RIGHT), pl.cross_core_slot(slot_num=4)]):
        y = pl.relu(pl.add(pl.matmul(x, w, out_dtype=pl.FP32), b))
    return y


@pl.jit
def linear_relu_rows_deep(x: pl.Tensor, w: pl.Tensor, b: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="linear_ud",
               optimizations=[pl.split(UP_DOWN), pl.cross_core_slot(slot_num=3)]):
        y = pl.relu(pl.add(pl.matmul(x, w, out_dtype=pl.FP32), b))
    return y


@pl.jit
def exp_matmul_columns(x: pl.Tensor, w: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="v2c_lr", optimizations=[pl.split(LEFT_RIGHT)]):
        y = pl.matmul(pl.exp(x), w, out_dtype=pl.FP32)
    return y


@pl.jit
def exp_matmul_slots(x: pl.Tensor, w: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="v2c_slots", optimizations=[pl.cross_core_slot(slot_num=3)]):
        y = pl.matmul(pl.exp(x), w, out_dtype=pl.FP32)
    return y


def _rand(shape: tuple, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _want(x, w, b):
    return np.maximum(x.astype(np.float64) @ w.astype(np.float64) + b, 0)


@settings(max_examples=4, deadline=None)
@example(m=16, k=13, n=5)  # 5 valid columns: the second AIV only pops and frees
@example(m=33, k=64, n=70)  # a ragged block with columns for both AIVs
@given(m=st.sampled_from([1, 16, 33]), k=st.sampled_from([13, 64]), n=st.sampled_from([1, 31, 70, 130]))
def test_left_right_splits_each_block_by_columns(m, k, n):
    x, w, b = _rand((m, k), m + k), _rand((k, n), k + n), _rand((1, n), n)
    y = np.full((m, n), 7.0, np.float32)
    linear_relu_columns(x, w, b, y)
    np.testing.assert_allclose(y, _want(x, w, b), rtol=1e-5, atol=2e-6 * k + 1e-6)


def test_up_down_with_a_deeper_ring_matches_numpy():
    x, w, b = _rand((100, 40), 1), _rand((40, 70), 2), _rand((1, 70), 3)
    y = np.zeros((100, 70), np.float32)
    linear_relu_rows_deep(x, w, b, y)
    np.testing.assert_allclose(y, _want(x, w, b), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize(("kernel", "split", "slots"), [(linear_relu_columns, 2, 4), (linear_relu_rows_deep, 1, 3)])
def test_the_pto_shows_the_split_and_the_depth(kernel, split, slots):
    args = [np.zeros((64, 32), np.float16), np.zeros((32, 64), np.float16), np.zeros((1, 64), np.float32),
            np.zeros((64, 64), np.float32)]
    (text,) = kernel.compile(*args).compiled.pto.values()
    cube, vector = text.split("pto.section.vector")
    assert re.search(rf"pto\.initialize_l2l_pipe \{{dir_mask = 1, slot_size = \d+, slot_num = {slots}\}}", cube)
    assert re.search(rf"pto\.tpush\(%\d+, %\d+ : !pto\.tile_buf<loc=acc.*\) \{{split = {split}\}}", cube)
    # each AIV pops its half: 64 x 32 (columns) or 32 x 64 (rows) of the 64 x 64 block
    rows, cols = (64, 32) if split == 2 else (32, 64)
    assert re.search(rf"pto\.declare_tile .*loc=vec, dtype=f32, rows={rows}, cols={cols}", vector), vector
    size = int(re.search(r"pto\.reserve_buffer \{name = \"c2v_fifo\", size = (\d+)", vector).group(1))
    assert size == slots * 64 * 64 * 4 // 2


def test_left_right_on_the_v2c_form_is_a_located_error():
    x, w, y = np.zeros((32, 64), np.float32), np.zeros((64, 16), np.float32), np.zeros((32, 16), np.float32)
    with pytest.raises(CompileError, match=r"LEFT_RIGHT\) of 'v2c_lr'.*not implemented") as err:
        exp_matmul_columns(x, w, y)
    assert err.value.span.line > 0


def test_a_v2c_depth_other_than_the_machines_is_a_located_error():
    x, w, y = np.zeros((32, 64), np.float32), np.zeros((64, 16), np.float32), np.zeros((32, 16), np.float32)
    with pytest.raises(PyptoTypeError, match=r"slot_num=3\) of 'v2c_slots'.*machine's 8 slots") as err:
        exp_matmul_slots(x, w, y)
    assert err.value.span.line > 0
