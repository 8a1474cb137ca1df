"""Eleventh red-team round: @pl.jit programs written from pypto-jit.md alone, the way upstream and
pypto-lib users write them (progs/r11_jit_programs.py; each function's docstring says what it
computes), compared with NumPy; and mistakes in such programs (progs/r11_jit_mistakes.py), each
refused at the user's line with a precise message."""

from __future__ import annotations

import os

import numpy as np
import pytest
from ml_dtypes import bfloat16

from pypto.errors import PyptoError
from pyptoemu.errors import KernelFault

from .helpers import HERE, load_file

PROGS = os.path.join(HERE, "progs", "r11_jit_programs.py")
MISTAKES = os.path.join(HERE, "progs", "r11_jit_mistakes.py")


def _progs():
    return load_file(PROGS, "r11")


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def _f32(a: np.ndarray) -> np.ndarray:
    return a.astype(np.float32)


def _bf16_round_away(x: np.ndarray) -> np.ndarray:
    """f32 -> bf16 to nearest, ties away from zero (pl.cast's default mode "round", pypto-jit §8)."""
    bits = x.astype(np.float32).view(np.uint32)
    return ((bits + np.uint32(0x8000)) & np.uint32(0xFFFF0000)).view(np.float32).astype(bfloat16)


def test_a_tile_and_a_count_carried_through_a_range_loop_with_an_if_on_a_tile_element():
    x = _rng(1).standard_normal((8, 128)).astype(np.float32)
    m, n = np.full((8, 32), np.nan, np.float32), np.full((1, 1), -1, np.int32)
    _progs().running_col_max(x, m, n)
    np.testing.assert_array_equal(m, np.maximum.reduce([x[:, 32 * k:32 * k + 32] for k in range(4)]))
    assert n[0, 0] == sum(x[0, 32 * k] > 0 for k in range(4))


def test_spmd_blocks_of_eight_rows_with_a_short_last_block_cast_bf16_with_the_default_rounding():
    x = _rng(2).standard_normal((21, 64)).astype(bfloat16)
    y = np.zeros((21, 64), bfloat16)
    _progs().spmd_scale_bf16_tail(x, y, 1.5)
    np.testing.assert_array_equal(_f32(y), _f32(_bf16_round_away(_f32(x) * np.float32(1.5))))


def test_orchestration_subscripts_passed_as_in_and_out_views_of_a_kernel():
    x = _rng(3).standard_normal((16, 32)).astype(np.float32)
    y = np.full_like(x, np.nan)
    _progs().views_as_outputs(x, y)
    np.testing.assert_array_equal(y, x + 1)


def test_int32_tensor_level_affine_map():
    x = _rng(4).integers(-1000, 1000, (16, 32)).astype(np.int32)
    y = np.zeros_like(x)
    _progs().int32_affine(x, y)
    np.testing.assert_array_equal(y, x * 3 + 7 - x)


def test_row_sums_of_two_tiles_joined_by_concat():
    rng = _rng(5)
    a, b = rng.standard_normal((8, 32)).astype(np.float32), rng.standard_normal((8, 32)).astype(np.float32)
    s = np.full((8, 1), np.nan, np.float32)
    _progs().concat_row_sums(a, b, s)
    np.testing.assert_allclose(s.reshape(8), np.hstack([a, b]).sum(1), rtol=1e-5, atol=1e-5)


def test_bf16_linear_with_an_fp32_bias_and_relu_fused_in_one_region():
    rng = _rng(6)
    x, w = rng.standard_normal((32, 64)).astype(bfloat16), rng.standard_normal((64, 48)).astype(bfloat16)
    b = rng.standard_normal((1, 48)).astype(np.float32)
    y = np.full((32, 48), np.nan, np.float32)
    _progs().linear_bf16_bias_relu(x, w, b, y)
    np.testing.assert_allclose(y, np.maximum(_f32(x) @ _f32(w) + b, 0), rtol=1e-5, atol=1e-4)


def test_fp16_rms_norm_computed_in_fp32():
    rng = _rng(7)
    x, g = rng.standard_normal((16, 64)).astype(np.float16), rng.standard_normal((1, 64)).astype(np.float16)
    y = np.zeros((16, 64), np.float16)
    _progs().rms_norm_fp16(x, g, y)
    xf = _f32(x)
    want = (xf / np.sqrt((xf * xf).mean(1, keepdims=True) + 1e-6) * _f32(g)).astype(np.float16)
    np.testing.assert_allclose(_f32(y), _f32(want), rtol=2e-3, atol=2e-3)


def test_a_row_count_read_on_the_host_sets_the_valid_rows_of_a_load():
    x = _rng(8).standard_normal((16, 32)).astype(np.float32)
    y = np.full((16, 32), -5.0, np.float32)
    _progs().host_read_picks_rows(x, np.array([[5]], np.int32), y)
    np.testing.assert_array_equal(y[:5], 2 * x[:5])
    assert (y[5:] == -5).all()


def test_split_k_over_spmd_blocks_adding_into_a_zeroed_output_atomically():
    rng = _rng(9)
    a, b = rng.standard_normal((16, 128)).astype(np.float16), rng.standard_normal((128, 32)).astype(np.float16)
    c = np.full((16, 32), np.nan, np.float32)
    _progs().splitk_atomic(a, b, c)
    np.testing.assert_allclose(c, _f32(a) @ _f32(b), rtol=1e-3, atol=1e-3 * 128 ** 0.5)


def test_scores_q_times_k_transposed_by_b_trans():
    rng = _rng(10)
    q, k = rng.standard_normal((16, 64)).astype(np.float16), rng.standard_normal((32, 64)).astype(np.float16)
    s = np.full((16, 32), np.nan, np.float32)
    _progs().attn_scores_trans_b(q, k, s)
    np.testing.assert_allclose(s, (_f32(q) @ _f32(k).T) * 0.125, rtol=1e-3, atol=1e-3 * 64 ** 0.5)


def test_an_inline_helper_writes_two_out_tensors_and_returns_one():
    x = _rng(11).standard_normal((8, 64)).astype(np.float32)
    mx, sm = np.full((8, 1), np.nan, np.float32), np.full((8, 1), np.nan, np.float32)
    _progs().inline_two_outputs(x, mx, sm)
    np.testing.assert_array_equal(mx.reshape(8), x.max(1))
    np.testing.assert_allclose(sm.reshape(8), x.sum(1), rtol=1e-5, atol=1e-5)


def test_a_name_bound_in_one_region_is_read_by_the_next():
    x = _rng(12).standard_normal((16, 32)).astype(np.float32)
    y = np.full_like(x, np.nan)
    _progs().two_stage_through_local(x, y)
    np.testing.assert_allclose(y, np.exp(x) - 1, rtol=1e-5, atol=1e-6)


def test_an_unrolled_loop_carrying_a_tile_stores_every_prefix():
    x = _rng(13).standard_normal((8, 32)).astype(np.float32)
    y = np.full_like(x, np.nan)
    _progs().unrolled_prefix_sum(x, y)
    np.testing.assert_allclose(y, np.cumsum(x.reshape(8, 4, 8), axis=1).reshape(8, 32), rtol=1e-5, atol=1e-5)


def test_a_column_of_row_sums_reshaped_to_a_row():
    x = _rng(14).standard_normal((16, 32)).astype(np.float32)
    y = np.full((1, 16), np.nan, np.float32)
    _progs().reshape_column_to_row(x, y)
    np.testing.assert_allclose(y.reshape(16), x.sum(1) * 0.5, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(("start", "steps"), [(3.0, 6), (100.0, 0), (99.0, 1)])
def test_a_while_loop_doubling_until_a_bound_counts_its_trips(start, steps):
    x = np.full((1, 16), start, np.float32)
    y, n = np.full_like(x, np.nan), np.full((1, 1), -1, np.int32)
    _progs().while_doubling_count(x, y, n)
    assert n[0, 0] == steps
    np.testing.assert_array_equal(y, x * np.float32(2 ** steps))


def test_parallel_iterations_each_dispatch_a_task_with_the_loop_variable_as_a_scalar():
    x = _rng(15).standard_normal((32, 16)).astype(np.float32)
    y = np.full_like(x, np.nan)
    _progs().parallel_blocks_host_offset(x, y, 10)
    np.testing.assert_array_equal(y, x + np.repeat(10 + np.arange(4), 8)[:, None].astype(np.float32))


def test_mask_gather_of_even_and_odd_columns_into_rows_narrower_than_a_tile_row():
    x = _rng(16).standard_normal((16, 8)).astype(np.float32)
    ev, od = np.full((16, 4), np.nan, np.float32), np.full((16, 4), np.nan, np.float32)
    _progs().even_odd_cols(x, ev, od)
    np.testing.assert_array_equal(ev, x[:, 0::2])
    np.testing.assert_array_equal(od, x[:, 1::2])


def _z(*shape, dtype=np.float32) -> np.ndarray:
    return np.zeros(shape, dtype)


MISTAKE_CASES = [
    ("slice_assign_wrong_window", (_z(8, 32), _z(8, 32)), 10, "value of shape [8, 32] does not fit the window of shape [8, 16]"),
    ("mixed_dtypes_no_cast", (_z(8, 32), _z(8, 32, dtype=np.float16), _z(8, 32)), 18,
     "pl.add: operands are FP32 and FP16; @pl.jit code does not promote implicitly"),
    ("name_hint_not_identifier", (_z(8, 32), _z(8, 32)), 28, "pl.at(name_hint=...) must be an identifier, got 'my kernel'"),
    ("load_past_end", (_z(16, 32), _z(16, 32)), 35, "window [8, 24) exceeds dim 0 of size 16 of the tensor"),
    ("cast_unknown_mode", (_z(8, 32), _z(8, 32, dtype=np.float16)), 43, "cast: unknown rounding mode 'nearest'"),
    ("gather_mask_other_width", (_z(8, 32), _z(8, 16, dtype=np.float16)), 50,
     "gather: output_dtype FP16 must have the width of FP32"),
    ("concat_rows_differ", (_z(8, 32), _z(16, 32), _z(8, 64)), 58,
     "concat: needs 2-D tiles with the same row count, got [8, 32] and [16, 32]"),
    ("fillpad_null", (_z(8, 32), _z(8, 32)), 65, "pl.fillpad: PadValue.null defines nothing; use zero, max or min"),
    ("arange_two_rows", (_z(2, 32, dtype=np.int32),), 71, "arange: the shape must be [1, N], got [2, 32]"),
    ("row_sum_tile_without_tmp", (_z(8, 32), _z(8, 1)), 78, "pl.row_sum takes 2 argument(s) (tile, tmp_tile), got 1"),
    ("spmd_same_work", (_z(8, 32), _z(8, 32)), 85, "race: WAW on arg1 bytes [0, 1024) between cores"),
    ("store_window_past_end", (_z(8, 32), _z(8, 32)), 92, "at offset 4 exceeds dim 0 of size 8 of the output tensor"),
    ("read_out_of_range", (_z(8, 32), _z(8, 32)), 97, "read: index 8 on axis 0 is outside the tensor's 0..8"),
]


@pytest.mark.parametrize(("name", "args", "line", "said"), MISTAKE_CASES, ids=[c[0] for c in MISTAKE_CASES])
def test_a_mistake_in_a_jit_program_is_refused_at_the_users_line(name, args, line, said):
    fn = getattr(load_file(MISTAKES, "r11_bad"), name)
    with pytest.raises((PyptoError, KernelFault)) as e:  # a race between the blocks is a run's error finding
        fn(*args)
    first = str(e.value).splitlines()[0]
    assert first.startswith(f"{MISTAKES}:{line}:"), first
    assert said in first, first
    assert "Traceback" not in str(e.value)


def test_a_tensor_op_on_the_control_plane_is_refused_as_misplaced():
    """pypto-jit §1.2: a computing op in the @pl.jit body outside pl.at is refused, located at it."""
    fn = load_file(MISTAKES, "r11_bad").tensor_op_on_host
    with pytest.raises(PyptoError, match="Misplaced tensor op: pl.add on the control plane") as e:
        fn(np.ones((8, 32), np.float32), _z(8, 32))
    assert e.value.span.filename.endswith("r11_jit_mistakes.py") and e.value.span.line == 23
