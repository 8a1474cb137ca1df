"""Thirteenth red-team round: @pl.jit programs written from pypto-jit.md alone (progs/r13_jit_programs.py;
each function's docstring says what it computes), compared with NumPy: an SPMD loop in fp16, a tile
carried through pl.range init_values, subscript windows and slice assignment, pypto-lib fusion
(rms_norm then silu), a bf16 matmul with an odd N, int32 tile arithmetic, a host read driving the
number of tasks, a transpose of odd sizes, column statistics with keepdim, split_aiv LEFT_RIGHT."""

from __future__ import annotations

import os

import numpy as np
from ml_dtypes import bfloat16

from .helpers import HERE, load_file

PROGS = os.path.join(HERE, "progs", "r13_jit_programs.py")


def _progs():
    return load_file(PROGS, "r13")


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def _f32(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


def test_spmd_blocks_each_take_eight_fp16_rows():
    x = _rng(1).uniform(-2, 2, (32, 64)).astype(np.float16)
    y = np.zeros_like(x)
    _progs().spmd_exp_half_fp16(x, y)
    want = np.exp(x.astype(np.float32)).astype(np.float16) * np.float16(0.5)
    np.testing.assert_allclose(y.astype(np.float32), want.astype(np.float32), rtol=1e-3)


def test_a_tile_carried_through_init_values_sums_the_row_blocks():
    x = _f32(_rng(2), 32, 32)
    y = np.full((8, 32), np.nan, np.float32)
    _progs().carried_column_sums(x, y)
    np.testing.assert_allclose(y, x.reshape(4, 8, 32).sum(0), rtol=1e-5, atol=1e-6)


def test_subscript_windows_and_slice_assignment():
    x = _f32(_rng(3), 32, 48)
    y = np.full((16, 48), np.nan, np.float32)
    _progs().halves_added_by_subscripts(x, y)
    np.testing.assert_allclose(y, x[:16] + x[16:], rtol=1e-6)


def test_rms_norm_then_silu_fused_in_one_region():
    rng = _rng(4)
    x, w = _f32(rng, 24, 96), _f32(rng, 96)
    y = np.zeros_like(x)
    _progs().fused_rms_norm_then_silu(x, w, y)
    n = x / np.sqrt((x.astype(np.float64) ** 2).mean(1, keepdims=True) + 1e-6) * w
    np.testing.assert_allclose(y, n / (1 + np.exp(-n)), rtol=1e-4, atol=1e-5)


def test_bf16_matmul_with_an_odd_n_then_relu():
    rng = _rng(5)
    a, b = _f32(rng, 48, 32).astype(bfloat16), _f32(rng, 32, 40).astype(bfloat16)
    y = np.zeros((48, 40), np.float32)
    _progs().bf16_matmul_relu_odd_n(a, b, y)
    want = np.maximum(a.astype(np.float32) @ b.astype(np.float32), 0)
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5 * 32)


def test_int32_tile_arithmetic():
    x = _rng(6).integers(-(2**20), 2**20, (16, 40)).astype(np.int32)
    y = np.zeros_like(x)
    _progs().int32_affine(x, y)
    np.testing.assert_array_equal(y, x * 3 + 7 - x)


def test_a_host_read_count_decides_how_many_tasks_run():
    x = _f32(_rng(7), 32, 16)
    y = np.full((32, 16), -5, np.float32)
    _progs().host_count_drives_tasks(x, np.array([[3]], np.int32), y)
    np.testing.assert_allclose(y[:24], x[:24] + 1, rtol=1e-6)
    np.testing.assert_array_equal(y[24:], -5)  # the fourth block never ran


def test_transpose_of_a_24x40_tensor():
    x = _f32(_rng(8), 24, 40)
    y = np.zeros((40, 24), np.float32)
    _progs().transpose_odd(x, y)
    np.testing.assert_array_equal(y, x.T)


def test_column_sums_and_maxima_keep_their_row_axis():
    x = _f32(_rng(9), 20, 48)
    s, m = np.zeros((1, 48), np.float32), np.zeros((1, 48), np.float32)
    _progs().column_stats(x, s, m)
    np.testing.assert_allclose(s, x.sum(0, keepdims=True), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(m, x.max(0, keepdims=True))


def test_split_aiv_left_right_lanes_square_their_column_halves():
    x = _f32(_rng(10), 16, 64)
    y = np.zeros_like(x)
    _progs().lanes_left_right_square_plus_one(x, y)
    np.testing.assert_allclose(y, x * x + 1, rtol=1e-6)
