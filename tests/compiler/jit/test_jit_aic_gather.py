"""``pl.aic_gather(x)`` in the split lane modes (spec pypto-jit §4.5): each AIV pushes its half of ``x``
to the cube through the V2C FIFO and the cube pops the joined tile into L1, so the kernel is a group
kernel (a cube section and a vector section of one function). Checked against NumPy, and in the
generated .pto: the FIFO ops, the sections, and no GM tensor between the lanes and the cube."""

from __future__ import annotations

import re

import numpy as np
import pytest

import pypto.language as pl

UP_DOWN, LEFT_RIGHT = pl.SplitMode.UP_DOWN, pl.SplitMode.LEFT_RIGHT


@pl.jit
def gather_rows_then_matmul(x: pl.Tensor, w: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="gather_rows_mm"):
        for _lane in pl.split_aiv(2, mode=UP_DOWN):
            h = pl.exp(pl.load(x, [0, 0], [32, 64]))
        acc = pl.matmul(pl.move(pl.aic_gather(h), target_memory=pl.Mem.Left),
                        pl.move(pl.load(w, [0, 0], [64, 48], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right))
        pl.store(acc, [0, 0], y)


@pl.jit
def gather_columns_then_matmul(x: pl.Tensor, w: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="gather_cols_mm"):
        for _lane in pl.split_aiv(2, mode=LEFT_RIGHT):
            h = pl.neg(pl.load(x, [16, 0], [32, 64]))
        acc = pl.matmul(pl.move(pl.aic_gather(h), target_memory=pl.Mem.Left),
                        pl.move(pl.load(w, [0, 0], [64, 32], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right))
        pl.store(acc, [0, 0], y)


@pl.jit
def gather_ragged_columns(x: pl.Tensor, w: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="gather_ragged"):
        for _lane in pl.split_aiv(2, mode=UP_DOWN):
            h = pl.exp(pl.load(x, [0, 0], [32, 64], valid_shape=[32, 50]))
        wm = pl.load(w, [0, 0], [64, 32], valid_shape=[50, 20], target_memory=pl.Mem.Mat)
        acc = pl.matmul(pl.move(pl.aic_gather(h), target_memory=pl.Mem.Left), pl.move(wm, target_memory=pl.Mem.Right))
        pl.store(acc, [0, 0], y)


@pl.jit
def gather_in_a_loop(x: pl.Tensor, w: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="gather_loop"):
        for i in pl.range(3):
            for _lane in pl.split_aiv(2, mode=LEFT_RIGHT):
                h = pl.exp(pl.load(x, [i * 32, 0], [32, 64]))
            wm = pl.load(w, [0, 0], [64, 32], target_memory=pl.Mem.Mat)
            acc = pl.matmul(pl.move(pl.aic_gather(h), target_memory=pl.Mem.Left),
                            pl.move(wm, target_memory=pl.Mem.Right))
            pl.store(acc, [i * 32, 0], y)


@pl.jit
def gather_for_the_cube(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for _lane in pl.split_aiv(2, mode=UP_DOWN):
            h = pl.neg(pl.load(x, [0, 0], [16, 64]))
        pl.store(pl.aic_gather(h), [0, 0], y)


def _f16(a: np.ndarray) -> np.ndarray:
    return a.astype(np.float16).astype(np.float64)


def test_up_down_halves_joined_for_a_second_matmul():
    rng = np.random.default_rng(141)
    x = (rng.standard_normal((32, 64)) * 0.3).astype(np.float16)
    w = rng.standard_normal((64, 48)).astype(np.float16)
    y = np.zeros((32, 48), np.float32)
    gather_rows_then_matmul(x, w, y)
    want = _f16(np.exp(x.astype(np.float32))) @ w.astype(np.float64)
    np.testing.assert_allclose(y, want, rtol=2e-3, atol=2e-3)
    r = gather_rows_then_matmul.last_result
    assert r.launches == 1  # one group kernel: no GM round trip between the lanes and the cube
    assert {c.id for c in r.cores if c.cycles > 0} == {"AIC0", "AIV0", "AIV1"}


def test_left_right_halves_joined_by_columns():
    rng = np.random.default_rng(142)
    x = rng.standard_normal((48, 64)).astype(np.float16)
    w = rng.standard_normal((64, 32)).astype(np.float16)
    y = np.zeros((32, 32), np.float32)
    gather_columns_then_matmul(x, w, y)
    want = -x[16:48].astype(np.float64) @ w.astype(np.float64)
    np.testing.assert_allclose(y, want, rtol=2e-3, atol=2e-3)


def test_ragged_halves_keep_their_valid_columns():
    # 50 of 64 columns valid: the joined tile's padding adds nothing to the product (K = 50)
    rng = np.random.default_rng(144)
    x = (rng.standard_normal((32, 50)) * 0.3).astype(np.float16)
    w = rng.standard_normal((50, 20)).astype(np.float16)
    y = np.zeros((32, 20), np.float32)
    gather_ragged_columns(x, w, y)
    want = _f16(np.exp(x.astype(np.float32))) @ w.astype(np.float64)
    np.testing.assert_allclose(y, want, rtol=2e-3, atol=2e-3)


def test_one_gather_per_loop_iteration():
    # each iteration pushes, pops and frees one slot: both sections run the loop
    rng = np.random.default_rng(145)
    x = (rng.standard_normal((96, 64)) * 0.3).astype(np.float16)
    w = rng.standard_normal((64, 32)).astype(np.float16)
    y = np.zeros((96, 32), np.float32)
    gather_in_a_loop(x, w, y)
    np.testing.assert_allclose(y, _f16(np.exp(x.astype(np.float32))) @ w.astype(np.float64), rtol=2e-3, atol=2e-3)


def test_a_gathered_tile_stored_by_the_cube_is_the_whole_tile():
    # was a located error ("needs the cube section of a mixed group kernel"), now joined through V2C
    x = np.random.default_rng(143).standard_normal((16, 64)).astype(np.float32)
    y = np.zeros_like(x)
    gather_for_the_cube(x, y)
    np.testing.assert_array_equal(y, -x)


@pytest.mark.parametrize(("kernel", "split"), [(gather_rows_then_matmul, 1), (gather_columns_then_matmul, 2)])
def test_the_pto_is_one_group_kernel_with_a_v2c_fifo(kernel, split):
    shapes = {1: ((32, 64), (64, 48), (32, 48)), 2: ((48, 64), (64, 32), (32, 32))}[split]
    args = [np.zeros(s, np.float16) for s in shapes[:2]] + [np.zeros(shapes[2], np.float32)]
    compiled = kernel.compile(*args).compiled
    (text,) = compiled.pto.values()
    cube, vector = text.split("pto.section.vector")
    assert "pto.section.cube" in cube
    assert re.search(r"pto\.reserve_buffer \{name = \"v2c_fifo\".*location = #pto\.address_space<mat>", cube)
    assert "pto.aic_initialize_pipe {dir_mask = 2" in cube and "pto.aiv_initialize_pipe {dir_mask = 2" in vector
    assert f"pto.tpop_from_aiv {{split = {split}}}" in cube and f"pto.tfree_from_aiv {{split = {split}}}" in cube
    assert re.search(rf"pto\.tpush_to_aic\(%\d+ : .*\) \{{split = {split}\}}", vector)
    assert "tmatmul" in cube and "tmatmul" not in vector and "texp" not in cube
    # the cube frees the slot right after the popped tile's last read (its move to L0A)
    lines = cube.splitlines()
    popped = re.search(r"(%\d+) = pto\.tpop_from_aiv", cube).group(1)
    last_read = max(i for i, line in enumerate(lines) if re.search(re.escape(popped) + r"\b", line))
    assert "pto.tmov" in lines[last_read] and "pto.tfree_from_aiv" in lines[last_read + 1]
    # the kernel's GM arguments are the program's x, w, y: no workspace carries the halves
    assert re.search(r"func\.func @\w+\(%arg0: !pto\.ptr<f16>, %arg1: !pto\.ptr<f16>, %arg2: !pto\.ptr<f32>\)", text)


def test_a_ragged_half_is_pushed_with_its_padding_zeroed():
    # hardware multiplies the whole fractal box, padding included: the AIV pushes a tile whose 14
    # padding columns were set to zero by tfillpad (pad=1: zero), not whatever texp left there
    args = [np.zeros((32, 50), np.float16), np.zeros((50, 20), np.float16), np.zeros((32, 20), np.float32)]
    (text,) = gather_ragged_columns.compile(*args).compiled.pto.values()
    vector = text.split("pto.section.vector")[1]
    filled = re.search(r"pto\.tfillpad ins\((%\d+) : [^)]*v_col=50[^)]*\) outs\((%\d+) : [^)]*v_col=64[^)]*pad=1>\)",
                       vector)
    assert filled, vector
    pushed = re.search(r"pto\.tpush_to_aic\((%\d+) :", vector).group(1)
    assert pushed == filled.group(2)
    # the cube still sees K = 50 valid columns
    assert re.search(r"pto\.tpop_from_aiv \{split = 1\} -> !pto\.tile_buf<loc=mat, [^>]*v_row=32, v_col=50", text)


def test_whole_halves_are_pushed_without_a_fillpad():
    args = [np.zeros((32, 64), np.float16), np.zeros((64, 48), np.float16), np.zeros((32, 48), np.float32)]
    (text,) = gather_rows_then_matmul.compile(*args).compiled.pto.values()
    assert "tfillpad" not in text
