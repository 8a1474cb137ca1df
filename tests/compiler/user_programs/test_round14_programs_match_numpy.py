"""Fourteenth red-team round: @pl.jit programs written from pypto-jit.md alone (progs/r14_jit_programs.py;
each function's docstring says what it computes), compared with NumPy: a kernel loop over an INT32 count it
read, pl.pipeline with an odd trip count and a carried tile, pl.while_ carrying a tile and two scalars,
SPMD blocks with a clamped tail, output windows written in place, concat + reshape, int8 dequantisation,
split-K with atomic adds, and pypto-lib fusion (softmax then layer_norm)."""

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


def test_pipeline_with_an_odd_trip_count_and_a_tile_carried_by_rebinding():
    x = _f32(_rng(2), 40, 32)
    y, total = np.full((40, 32), np.nan, np.float32), np.full((8, 32), np.nan, np.float32)
    _progs().pipelined_scaled_blocks_and_total(x, y, total)
    want = x * np.repeat(np.arange(1, 6, dtype=np.float32), 8)[:, None]
    np.testing.assert_allclose(y, want, rtol=1e-6)
    np.testing.assert_allclose(total, want.reshape(5, 8, 32).sum(0), rtol=1e-5, atol=1e-5)


def test_while_carries_a_tile_a_bound_and_a_count():
    x = _f32(_rng(3), 8, 16)
    y, steps = np.zeros_like(x), np.zeros((1, 1), np.int32)
    _progs().while_doubling_until_large(x, y, steps)
    np.testing.assert_array_equal(y, x * 128)
    assert steps[0, 0] == 7


def test_spmd_blocks_with_a_clamped_tail():
    x = _f32(_rng(4), 40, 32)
    y = np.full((40, 32), np.nan, np.float32)
    _progs().spmd_clamped_tail_blocks(x, y)
    np.testing.assert_allclose(y, x * x - 1, rtol=1e-6, atol=1e-6)


def test_windows_of_the_output_written_in_place_leave_the_rest():
    x = _f32(_rng(5), 16, 48)
    y = np.full((24, 48), 7.0, np.float32)
    _progs().window_views_written_in_place(x, y)
    want = np.full((24, 48), 7.0, np.float32)
    want[8:16, 16:48] = np.exp(x[0:8, 0:32])
    want[0:8, 0:16] = -x[8:16, 32:48]
    np.testing.assert_allclose(y, want, rtol=1e-6)


def test_concat_is_column_wise_and_reshape_row_major():
    a, b = _f32(_rng(6), 8, 32), _f32(_rng(7), 8, 32)
    y = np.zeros((16, 32), np.float32)
    _progs().concat_then_reshape_rows(a, b, y)
    np.testing.assert_allclose(y, np.concatenate([a, b], 1).reshape(16, 32) + 1, rtol=1e-6)


def test_int8_dequantised_to_fp16():
    q = _rng(8).integers(-128, 128, (16, 64), dtype=np.int8)
    y = np.zeros((16, 64), np.float16)
    _progs().int8_dequant_scaled_fp16(q, y)
    np.testing.assert_array_equal(y, q.astype(np.float16) * np.float16(0.125))


def test_split_k_chunks_added_atomically_into_a_zeroed_output():
    a = _rng(9).standard_normal((32, 128)).astype(np.float16)
    b = _rng(10).standard_normal((128, 32)).astype(np.float16)
    c = np.full((32, 32), np.nan, np.float32)
    _progs().split_k_atomic_gemm(a, b, c)
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-4, atol=128 * 1e-5)


def test_softmax_fused_with_layer_norm():
    x, g, bta = _f32(_rng(11), 16, 48), _f32(_rng(12), 48), _f32(_rng(13), 48)
    y = np.zeros((16, 48), np.float32)
    _progs().softmax_then_layer_norm(x, g, bta, y)
    s = np.exp(x - x.max(1, keepdims=True))
    s = s / s.sum(1, keepdims=True) * 16
    m, v = s.mean(1, keepdims=True), ((s - s.mean(1, keepdims=True)) ** 2).mean(1, keepdims=True)
    np.testing.assert_allclose(y, (s - m) / np.sqrt(v + 1e-5) * g + bta, rtol=1e-4, atol=1e-4)
