"""Fourteenth red-team round: @pl.jit programs written from pypto-jit.md alone (progs/r14_jit_programs.py;
each function's docstring says what it computes), compared with NumPy."""

from __future__ import annotations

import os

import numpy as np

from .helpers import HERE, load_file

PROGS = os.path.join(HERE, "progs", "r14_jit_programs.py")


def _progs():
    return load_file(PROGS, "r14")


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def _f32(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


def test_a_kernel_loop_over_an_int32_count_it_read():
    """The loop's bound is an INT32 scalar: the kernel's scf.for takes it cast to index (pto-text-format
    §3.2: the bounds of a loop are index), which the verifier now requires (it ran the i32 bound before)."""
    x = _f32(_rng(1), 32, 16)
    y = np.full((32, 16), np.nan, np.float32)
    _progs().count_read_in_kernel(x, np.array([[3]], np.int32), y)
    np.testing.assert_array_equal(y[:24], x[:24] + 1)
    assert np.isnan(y[24:]).all()
