"""Fifteenth red-team round: @pl.jit programs written from the specs alone (progs/r15_jit_programs.py;
each function's docstring says what it computes), compared with NumPy: several kernels (pl.at regions)
handing a local from one to the next, pl.parallel tasks with a scalar the orchestration read, a
tensor-level matmul with a_trans on sizes that are not tile multiples, cast modes on negative values and
ties, lanes of pl.split_aiv(NONE) guarding their stores, and a fused softmax chain."""

from __future__ import annotations

import os

import numpy as np

from .helpers import HERE, load_file

PROGS = os.path.join(HERE, "progs", "r15_jit_programs.py")


def _progs():
    return load_file(PROGS, "r15")


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def test_a_local_bound_in_one_region_is_read_by_the_next():
    x = _rng(1).standard_normal((16, 64)).astype(np.float32)
    y = np.zeros_like(x)
    _progs().local_of_one_region_read_by_the_next(x, y)
    np.testing.assert_allclose(y, np.exp(x - x.max(1, keepdims=True)), rtol=1e-5)


def test_parallel_tasks_scale_by_a_scalar_the_orchestration_read():
    x = _rng(2).standard_normal((32, 32)).astype(np.float32)
    y = np.zeros_like(x)
    _progs().parallel_tasks_with_a_scalar_read(x, np.array([[1.5]], np.float32), y)
    np.testing.assert_allclose(y, x * (1.5 + np.repeat(np.arange(4), 8)[:, None]), rtol=1e-6)


def test_a_tensor_matmul_with_a_transposed_on_odd_sizes():
    rng = _rng(3)
    a = rng.standard_normal((48, 24)).astype(np.float16)
    b = rng.standard_normal((48, 40)).astype(np.float16)
    c = np.zeros((24, 40), np.float32)
    _progs().matmul_a_transposed_odd(a, b, c)
    np.testing.assert_allclose(c, a.astype(np.float32).T @ b.astype(np.float32), rtol=1e-3, atol=1e-3)


def test_cast_modes_floor_ceil_round_on_negatives_and_ties():
    x = (_rng(4).standard_normal((8, 16)) * 4).astype(np.float32)
    x[0, :6] = [-2.5, 2.5, -0.5, 0.5, -1.5, 1.5]
    f, c, r = (np.zeros((8, 16), np.int32) for _ in range(3))
    _progs().cast_modes_on_negatives(x, f, c, r)
    np.testing.assert_array_equal(f, np.floor(x))
    np.testing.assert_array_equal(c, np.ceil(x))
    np.testing.assert_array_equal(r, np.sign(x) * np.floor(np.abs(x) + 0.5))  # ties away from zero


def test_split_none_lanes_guard_their_stores():
    x = _rng(5).standard_normal((16, 32)).astype(np.float32)
    y, z = np.zeros_like(x), np.zeros_like(x)
    _progs().split_none_guarded_store(x, y, z)
    np.testing.assert_array_equal(y, x * 2)
    np.testing.assert_array_equal(z, x + 1)


def test_a_fused_softmax_chain_scaled_by_the_row_sum():
    x = _rng(6).standard_normal((8, 64)).astype(np.float32)
    y = np.zeros_like(x)
    _progs().softmax_then_scale_by_row_sum(x, y)
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(1, keepdims=True) * x.sum(1, keepdims=True), rtol=1e-4, atol=1e-5)
