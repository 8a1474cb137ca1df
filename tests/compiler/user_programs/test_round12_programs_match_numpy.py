"""Twelfth red-team round: @pl.jit programs written from pypto-jit.md alone, the way upstream and
pypto-lib users write them (progs/r12_jit_programs.py; each function's docstring says what it
computes), compared with NumPy: clamped and dynamic-extent windows, the compare form of gather, lanes
joined for the cube, a manual scope joined by task_dummy, every cast mode, pl.pipeline with an odd
trip count, an int8 linear, predicated SPMD launches, a pl.RUNTIME scalar, fillpad_expand. Strict
xfails: what the emulator does not do yet."""

from __future__ import annotations

import os

import numpy as np
import pytest

from pypto.errors import PyptoError

from .helpers import HERE, load_file

PROGS = os.path.join(HERE, "progs", "r12_jit_programs.py")


def _progs():
    return load_file(PROGS, "r12")


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def _f32(a: np.ndarray) -> np.ndarray:
    return a.astype(np.float32)


def test_windows_past_the_end_are_cut_by_clamp():
    x = _f32(_rng(1).standard_normal((20, 32)))
    y = np.full((20, 1), np.nan, np.float32)
    _progs().clamped_tail_rows(x, y)
    np.testing.assert_allclose(y[:, 0], x.sum(1), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("n", [16, 37, 5])
def test_a_dynamic_row_count_bound_in_the_body_with_a_ragged_last_step(n):
    x = _f32(_rng(2).standard_normal((n, 64)))
    y = np.full_like(x, np.nan)
    _progs().dynamic_rows_bound(x, y)
    np.testing.assert_allclose(y, x * x - x, rtol=1e-6)


def test_compare_form_gather_packs_offset_indices_and_counts_per_row():
    x = _f32(_rng(3).random((8, 32)))
    idx, cnt = np.full((8, 32), -7, np.int32), np.full((8, 1), -7, np.int32)
    _progs().positives_by_compare_gather(x, idx, cnt)
    for i in range(8):
        kept = np.nonzero(x[i] > 0.5)[0] + 100
        assert cnt[i, 0] == len(kept)
        np.testing.assert_array_equal(idx[i, :len(kept)], kept)


def test_relu_split_over_the_two_lanes_then_gathered_for_the_cube():
    rng = _rng(4)
    x, w = rng.standard_normal((2, 32, 32)).astype(np.float16)
    y = np.full((32, 32), np.nan, np.float32)
    _progs().lanes_shard_and_gather(x, w, y)
    np.testing.assert_allclose(y, _f32(np.maximum(x, 0)) @ _f32(w), rtol=1e-5, atol=1e-3)


def test_manual_scope_tasks_joined_by_a_task_dummy():
    x = _f32(_rng(5).standard_normal((16, 32)))
    a, b, c = (np.full_like(x, np.nan) for _ in range(3))
    _progs().manual_scope_join(x, a, b, c)
    np.testing.assert_allclose(c, (x + 1) + (x * 2), rtol=1e-6)


def test_fp32_to_int32_in_every_rounding_mode_by_name():
    x = _f32(_rng(6).standard_normal((8, 32)) * 10)
    x[0, :8] = [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.5, -3.5]  # ties
    outs = [np.zeros((8, 32), np.int32) for _ in range(5)]
    _progs().cast_modes_to_int32(x, *outs)
    away = np.sign(x) * np.floor(np.abs(x) + 0.5)
    for got, want in zip(outs, (np.floor(x), np.ceil(x), np.trunc(x), away, np.rint(x)), strict=True):
        np.testing.assert_array_equal(got, want)


def test_pipeline_loop_with_an_odd_trip_count_carries_its_sum():
    x = _f32(_rng(7).standard_normal((8, 160)))
    y = np.full((8, 32), np.nan, np.float32)
    _progs().pipeline_running_sum(x, y)
    np.testing.assert_allclose(y, x.reshape(8, 5, 32).sum(1), rtol=1e-5, atol=1e-5)


def test_int8_linear_at_tensor_level_in_int32():
    rng = _rng(8)
    x = rng.integers(-128, 128, (16, 64)).astype(np.int8)
    w = rng.integers(-128, 128, (64, 32)).astype(np.int8)
    y = np.zeros((16, 32), np.int32)
    _progs().int8_linear_int32(x, w, y)
    np.testing.assert_array_equal(y, x.astype(np.int32) @ w.astype(np.int32) + 1000)


@pytest.mark.parametrize("flags", [(1, 1), (0, 1), (1, 0), (0, 0)])
def test_spmd_launches_run_only_when_their_predicate_holds(flags):
    x = _f32(_rng(9).standard_normal((32, 32)))
    y = np.full_like(x, 7.0)
    _progs().spmd_rows_predicated(np.array([[flags[0]], [flags[1]]], np.int32), x, y)
    want = np.full_like(x, 7.0)
    if flags[0]:
        want[:16] = -x[:16]
    if flags[1]:
        want[16:] = -x[16:]
    np.testing.assert_array_equal(y, want)


def test_a_runtime_scalar_parameter_takes_each_call_value_from_one_compile():
    x = _f32(_rng(10).standard_normal((8, 32)))
    progs = _progs()
    for s in (2.0, -0.25):
        y = np.full_like(x, np.nan)
        progs.runtime_scale(x, y, s)
        np.testing.assert_allclose(y, x * np.float32(s), rtol=1e-6)
    assert len(progs.runtime_scale._cache) == 1


def test_fillpad_expand_with_min_pad_feeds_a_whole_tile_row_max():
    x = _f32(_rng(11).standard_normal((8, 32)))
    m = np.full((16, 1), np.nan, np.float32)
    _progs().fillpad_expand_row_max(x, m)
    want = np.full(16, -np.inf, np.float32)
    want[:5] = x[:5, :20].max(1)
    np.testing.assert_array_equal(m[:, 0], want)


@pytest.mark.xfail(strict=True, raises=PyptoError,
                   reason="pl.system.syncall (pypto-jit §8, §4.3: a barrier among the blocks of the current SPMD "
                          "launch) is an unknown op: pto-text-format.md has no cross-block barrier op to lower it to "
                          "(sync.set/sync.wait reach only the cores of one group), and the chip model has no barrier "
                          "across blocks (one that waits for blocks of a later wave would deadlock)")
def test_syncall_lets_block_zero_read_what_the_other_blocks_wrote():
    x = _f32(_rng(12).standard_normal((32, 16)))
    part, total = np.full((32, 16), np.nan, np.float32), np.full((8, 16), np.nan, np.float32)
    _progs().spmd_syncall_reduce(x, part, total)
    np.testing.assert_array_equal(part, 2 * x)
    np.testing.assert_allclose(total, (2 * x).reshape(4, 8, 16).sum(0), rtol=1e-5, atol=1e-5)


def test_a_scalar_cast_to_int_rounds_as_the_same_cast_of_a_tile():
    x = np.array([[2.5, -2.5, 1.4, -1.6, 0.5, 3.5, -0.5, 7.9]], np.float32)
    y = np.zeros((1, 8), np.int32)
    _progs().scalar_casts_round(x, y)
    np.testing.assert_array_equal(y[0], [3, -3, 1, -2, 1, 4, -1, 8])
