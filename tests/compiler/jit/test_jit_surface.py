"""The jit language surface beyond slicing (spec pypto-jit §6-§8) through @pl.jit programs on the emulator:
pl.read/pl.write, pl.tile.slice, pl.concat, pl.tile.transpose_view, valid shapes and pads, sort/top-k."""

from __future__ import annotations

import math

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import PyptoError


@pl.jit
def tile_elements(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="tile_elements"):
        t = pl.load(x, [0, 0], [16, 32])
        v = pl.read(t, [3, 5])
        w = pl.tile.read(t, 2 * 32 + 7)
        u = pl.add(t, t)
        pl.write(u, [0, 0], v)
        pl.tile.write(u, [15, 31], w)
        y[:, :] = u


def test_read_and_write_tile_elements():
    x = np.random.default_rng(0).standard_normal((16, 32)).astype(np.float32)
    y = np.zeros_like(x)
    tile_elements(x, y)
    ref = x * 2
    ref[0, 0], ref[15, 31] = x[3, 5], x[2, 7]
    np.testing.assert_array_equal(y, ref)


@pl.jit
def host_elements(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    v = pl.read(x, [1, 2])
    pl.write(y, [0, 0], v)
    k = pl.read(x, 5)  # a flat row-major index
    pl.write(y, 3, k)


@pl.jit
def gm_elements(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        v = pl.read(x, [1, 2])
        pl.write(y, [1, 0], v)
        pl.write(y, [0, 1], 2.5)


def test_read_and_write_tensor_elements_on_the_host_and_in_a_kernel():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    y = np.full((2, 2), -1.0, np.float32)
    host_elements(x, y)
    np.testing.assert_array_equal(y, [[6.0, -1.0], [-1.0, 5.0]])
    y = np.full((2, 2), -1.0, np.float32)
    gm_elements(x, y)
    np.testing.assert_array_equal(y, [[-1.0, 2.5], [6.0, -1.0]])


@pl.jit
def swap_halves(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [16, 32])
        left = pl.tile.slice(t, [16, 16], [0, 0])
        right = pl.slice(t, [16, 16], [0, 16])
        y[:, :] = pl.concat(right, left)


def test_tile_slice_and_concat():
    x = np.random.default_rng(1).standard_normal((16, 32)).astype(np.float32)
    y = np.zeros_like(x)
    swap_halves(x, y)
    np.testing.assert_array_equal(y, np.concatenate([x[:, 16:], x[:, :16]], axis=1))


@pl.jit
def ragged_row_max(x: pl.Tensor, y: pl.Out[pl.Tensor], n: int):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [8, 64], valid_shape=[8, n])
        full = pl.fillpad(t, pad_value=pl.PadValue.min)
        tmp = pl.create_tile([8, 64], dtype=pl.FP32, target_memory=pl.Mem.Vec)
        y[:, :] = pl.row_max(full, tmp)


@pl.jit
def clamped_sum(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.slice(x, [8, 32], [0, 16], clamp=True, pad_value=0)  # x has 40 columns: 24 are valid
        tmp = pl.create_tile([8, 32], dtype=pl.FP32, target_memory=pl.Mem.Vec)
        y[:, :] = pl.row_sum(pl.fillpad(t, pad_value=0), tmp)


def test_valid_shape_and_pad_values():
    x = (np.random.default_rng(2).standard_normal((8, 64)) - 3).astype(np.float32)  # all negative rows
    y = np.zeros((8, 1), np.float32)
    ragged_row_max(x, y, 40)  # a zero pad would win the max
    np.testing.assert_array_equal(y[:, 0], x[:, :40].max(axis=1))
    x = np.random.default_rng(3).standard_normal((8, 40)).astype(np.float32)
    y = np.zeros((8, 1), np.float32)
    clamped_sum(x, y)
    np.testing.assert_allclose(y[:, 0], x[:, 16:].sum(axis=1), rtol=1e-5, atol=1e-5)


N, K = 512, 8


@pl.jit
def top_k(x: pl.Tensor, vals: pl.Out[pl.Tensor], idxs: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="topk"):
        row = pl.load(x, [0, 0], [1, N])
        ids = pl.arange(0, [1, N], dtype=pl.UINT32)
        s = pl.sort32(row, ids)  # runs of 32 records = 64 cells
        s = pl.mrgsort(s, block_len=64)
        s = pl.mrgsort(s, block_len=256)
        top = pl.tile.slice(s, [1, 2 * K], [0, 0])
        vals[:, :] = pl.gather(top, mask_pattern=pl.tile.MaskPattern.P0101)
        idxs[:, :] = pl.gather(top, mask_pattern=pl.tile.MaskPattern.P1010, output_dtype=pl.INT32)


def test_top_k_by_sort32_mrgsort_and_mask_gathers():
    x = (np.random.default_rng(4).permutation(N).astype(np.float32) / 7).reshape(1, N)
    vals, idxs = np.zeros((1, K), np.float32), np.zeros((1, K), np.int32)
    top_k(x, vals, idxs)
    order = np.argsort(-x[0], kind="stable")[:K]
    np.testing.assert_array_equal(vals[0], x[0, order])
    np.testing.assert_array_equal(idxs[0], order)


@pl.jit
def q_kt(q: pl.Tensor, k: pl.Tensor, s: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        qm = pl.load(q, [0, 0], [32, 64], target_memory=pl.Mem.Mat)
        km = pl.load(k, [0, 0], [48, 64], target_memory=pl.Mem.Mat)
        kr = pl.move(pl.tile.transpose_view(km), target_memory=pl.Mem.Right)
        s[:, :] = pl.matmul(pl.move(qm, target_memory=pl.Mem.Left), kr)


def test_transpose_view_makes_the_right_operand_of_q_kt():
    rng = np.random.default_rng(5)
    q = rng.standard_normal((32, 64)).astype(np.float16)
    k = rng.standard_normal((48, 64)).astype(np.float16)
    s = np.zeros((32, 48), np.float32)
    q_kt(q, k, s)
    np.testing.assert_allclose(s, q.astype(np.float32) @ k.astype(np.float32).T, rtol=1e-3, atol=1e-3)


@pl.jit
def vec_transpose_view(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [16, 16])
        y[:, :] = pl.tile.transpose_view(t)


@pl.jit
def widening_slice(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y[:, :] = pl.load(x, [0, 0], [8, 16], valid_shape=[8, 32])


@pl.jit
def format2_merge(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [1, 64])
        y[:, :] = pl.mrgsort(t, t, exhausted=1)


@pytest.mark.parametrize(
    ("kernel", "shapes", "message"),
    [
        (vec_transpose_view, ((16, 16), (16, 16)), "Vec.*pl.transpose"),
        (widening_slice, ((8, 16), (8, 16)), r"valid_shape\[1\] = 32 must be in \[1, 16\]"),
        (format2_merge, ((1, 64), (1, 128)), r"pl.mrgsort\(exhausted=...\) takes True or False, got 1"),
    ],
)
def test_refusals_point_at_the_line(kernel, shapes, message):
    args = [np.zeros(s, np.float32) for s in shapes]
    with pytest.raises(PyptoError, match=r"test_jit_surface.py:\d+:\d+: .*" + message):
        kernel(*args)



@pl.jit
def narrowed_row_sum(x: pl.Tensor, y: pl.Out[pl.Tensor], cols: int):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [8, 64])
        pl.tile.set_validshape(t, 8, cols)
        tmp = pl.create_tile([8, 64], dtype=pl.FP32, target_memory=pl.Mem.Vec)
        y[:, :] = pl.row_sum(t, tmp)


def test_set_validshape_narrows_what_a_reduction_reads():
    x = np.random.default_rng(6).standard_normal((8, 64)).astype(np.float32)
    y = np.zeros((8, 1), np.float32)
    narrowed_row_sum(x, y, 24)
    np.testing.assert_allclose(y[:, 0], x[:, :24].sum(axis=1), rtol=1e-5, atol=1e-5)


@pl.jit
def gathers(x: pl.Tensor, idx: pl.Tensor, flat: pl.Out[pl.Tensor], row: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [4, 16])
        i = pl.load(idx, [0, 0], [2, 8])
        flat[:, :] = pl.tile.gather(t, i)
        first = pl.load(x, [0, 0], [1, 16])
        row[:, :] = pl.gather(first, -1, pl.load(idx, [0, 0], [1, 8]))


def test_gather_index_forms():
    x = np.random.default_rng(7).standard_normal((4, 16)).astype(np.float32)
    idx = np.random.default_rng(8).integers(0, 16, size=(2, 8)).astype(np.int32)
    idx[1] += 40  # flat indices reach other rows
    flat, row = np.zeros((2, 8), np.float32), np.zeros((1, 8), np.float32)
    gathers(x, idx, flat, row)
    np.testing.assert_array_equal(flat, x.reshape(-1)[idx])
    np.testing.assert_array_equal(row[0], x[0, idx[0]])


@pl.jit
def pad_forms(x: pl.Tensor, wide: pl.Out[pl.Tensor], same: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [8, 16], valid_shape=[8, 10])
        wide[:, :] = pl.fillpad_expand(t, [8, 32], pad_value=pl.PadValue.max)
        pl.tile.fillpad_inplace(t, pad_value=-math.inf)
        same[:, :] = t


def test_fillpad_expand_and_inplace():
    x = np.random.default_rng(9).standard_normal((8, 16)).astype(np.float32)
    wide, same = np.zeros((8, 32), np.float32), np.zeros((8, 16), np.float32)
    pad_forms(x, wide, same)
    np.testing.assert_array_equal(wide[:, :10], x[:, :10])
    assert np.all(wide[:, 10:] == np.inf)
    np.testing.assert_array_equal(same[:, :10], x[:, :10])
    assert np.all(same[:, 10:] == -np.inf)
