"""``pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN | LEFT_RIGHT)`` (spec pypto-jit §4.5): each AIV of the core
group processes its half of every vector tile of the region, by rows or by columns, so the region
written for whole tiles gives the whole result; ``pl.aiv_shard`` halves a value from outside the
region. Checked against NumPy; what cannot be halved is an error at the user's line."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import PyptoError

UP_DOWN, LEFT_RIGHT = pl.SplitMode.UP_DOWN, pl.SplitMode.LEFT_RIGHT


@pl.jit
def softmax_rows_by_halves(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="softmax_halves"):
        for _lane in pl.split_aiv(2, mode=UP_DOWN):
            t = pl.load(x, [0, 0], [32, 64])
            tmp = pl.create_tile([32, 64], dtype=pl.FP32, target_memory=pl.Mem.Vec)
            e = pl.exp(pl.row_expand_sub(t, pl.row_max(t, tmp)))
            pl.store(pl.row_expand_div(e, pl.row_sum(e, tmp)), [0, 0], y)


@pl.jit
def softmax_rows_on_one_aiv(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="softmax_whole"):
        t = pl.load(x, [0, 0], [32, 64])
        tmp = pl.create_tile([32, 64], dtype=pl.FP32, target_memory=pl.Mem.Vec)
        e = pl.exp(pl.row_expand_sub(t, pl.row_max(t, tmp)))
        pl.store(pl.row_expand_div(e, pl.row_sum(e, tmp)), [0, 0], y)


@pl.jit
def scaled_sum_by_columns(x: pl.Tensor, s: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="column_halves"):
        for _lane in pl.split_aiv(2, mode=LEFT_RIGHT):
            acc = pl.full([16, 64], dtype=pl.FP32, value=1.0)
            scale = pl.load(s, [0, 0], [16, 1])  # a row vector: one column, not halved
            for k in pl.range(3):
                acc = pl.add(acc, pl.load(x, [16, k * 64], [16, 64]))
            pl.store(pl.row_expand_mul(acc, scale), [8, 64], y)


@pl.jit
def shard_of_an_outer_tile(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="shard"):
        t = pl.load(x, [0, 0], [32, 64])
        for _lane in pl.split_aiv(2, mode=LEFT_RIGHT):
            pl.store(pl.neg(pl.aiv_shard(t)), [0, 0], y)
        for _lane in pl.split_aiv(2, mode=UP_DOWN):
            pl.store(pl.adds(pl.aiv_shard(t), 2.0), [0, 64], y)


def test_up_down_halves_rows_and_row_reductions_stay_whole():
    x = np.random.default_rng(101).standard_normal((32, 64)).astype(np.float32)
    y = np.zeros_like(x)
    softmax_rows_by_halves(x, y)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)
    r = softmax_rows_by_halves.last_result
    assert sorted(c.id for c in r.cores if c.kind == "aiv" and c.cycles > 0) == ["AIV0", "AIV1"]
    whole = np.zeros_like(x)
    softmax_rows_on_one_aiv(x, whole)
    np.testing.assert_allclose(whole, y, rtol=1e-6)
    assert r.cycles < softmax_rows_on_one_aiv.last_result.cycles  # two AIVs, half the rows each


def test_left_right_halves_columns_carried_values_and_keeps_row_vectors():
    rng = np.random.default_rng(102)
    x = rng.standard_normal((48, 192)).astype(np.float32)
    s = rng.standard_normal((16, 1)).astype(np.float32)
    y = np.full((32, 160), 7.0, np.float32)
    scaled_sum_by_columns(x, s, y)
    want = np.full_like(y, 7.0)
    want[8:24, 64:128] = (1.0 + x[16:32, 0:64] + x[16:32, 64:128] + x[16:32, 128:192]) * s
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-6)


def test_aiv_shard_gives_each_lane_its_half_of_an_outer_tile():
    x = np.random.default_rng(103).standard_normal((32, 64)).astype(np.float32)
    y = np.zeros((32, 128), np.float32)
    shard_of_an_outer_tile(x, y)
    np.testing.assert_array_equal(y[:, :64], -x)
    np.testing.assert_array_equal(y[:, 64:], x + 2.0)


@pl.jit
def row_sum_by_columns(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for _lane in pl.split_aiv(2, mode=LEFT_RIGHT):
            t = pl.load(x, [0, 0], [16, 64])
            tmp = pl.create_tile([16, 64], dtype=pl.FP32, target_memory=pl.Mem.Vec)
            pl.store(pl.row_sum(t, tmp), [0, 0], y)


@pl.jit
def odd_rows(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for _lane in pl.split_aiv(2, mode=UP_DOWN):
            pl.store(pl.neg(pl.load(x, [0, 0], [15, 64])), [0, 0], y)


@pl.jit
def identity_gather(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for _lane in pl.split_aiv(2, mode=pl.SplitMode.NONE):
            h = pl.neg(pl.load(x, [0, 0], [16, 64]))
        if pl.get_subblock_idx() == 0:  # code outside the region runs on both AIVs
            pl.store(pl.aic_gather(h), [0, 0], y)


@pl.jit
def outer_tile_read_whole(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [16, 64])
        for _lane in pl.split_aiv(2, mode=UP_DOWN):
            pl.store(pl.neg(t), [0, 0], y)


@pytest.mark.parametrize(("kernel", "shapes", "message"), [
    (outer_tile_read_whole, ((16, 64), (16, 64)), r"the tile 't' from outside the region, unless read as pl.aiv_shard"),
    (row_sum_by_columns, ((16, 64), (16, 1)), r"LEFT_RIGHT.*block.row_sum, which reduces along the split axis"),
    (odd_rows, ((16, 64), (16, 64)), r"UP_DOWN.*extent 15 along the split axis \(odd\)"),
])
def test_what_cannot_be_halved_is_an_error_at_the_line(kernel, shapes, message):
    args = [np.zeros(s, np.float32) for s in shapes]
    with pytest.raises(PyptoError, match=r"test_jit_split_aiv_halves.py:\d+:\d+: .*" + message):
        kernel(*args)


def test_in_none_mode_aic_gather_is_the_value_itself():
    x = np.random.default_rng(104).standard_normal((16, 64)).astype(np.float32)
    y = np.zeros_like(x)
    identity_gather(x, y)
    np.testing.assert_array_equal(y, -x)


@pl.jit
def product_split(a: pl.Tensor, b: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="mm_split",
               optimizations=[pl.split(pl.SplitMode.LEFT_RIGHT), pl.cross_core_slot(slot_num=4)]):
        y[:, :] = pl.matmul(a, b)


@pl.jit
def product_plain(a: pl.Tensor, b: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="mm_plain"):
        y[:, :] = pl.matmul(a, b)


def test_the_split_optimization_of_a_region_changes_no_result():
    # spec §4.1: pl.split / pl.cross_core_slot are performance-only (a kernel mixing cube and vector
    # work in one region is not compiled yet; this one is the cube half)
    rng = np.random.default_rng(105)
    a, b = rng.standard_normal((64, 96)).astype(np.float32), rng.standard_normal((96, 48)).astype(np.float32)
    split, plain = np.zeros((64, 48), np.float32), np.zeros((64, 48), np.float32)
    product_split(a, b, split)
    product_plain(a, b, plain)
    np.testing.assert_array_equal(split, plain)
    np.testing.assert_allclose(split, a @ b, rtol=1e-4, atol=1e-4)


@pl.jit
def relu_product_split(a: pl.Tensor, b: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="mixed_split", optimizations=[pl.split(pl.SplitMode.UP_DOWN)]):
        y[:, :] = pl.relu(pl.matmul(a, b))


def test_the_split_optimization_of_a_mixed_cube_vector_region_changes_no_result():
    # spec §4.1: pl.split marks a mixed region (matmul and vector ops) and is performance-only; the
    # region is split into a cube kernel and a vector kernel (SplitCubeVector) and must equal relu(a @ b)
    rng = np.random.default_rng(5)
    a = rng.standard_normal((64, 32)).astype(np.float32)
    b = rng.standard_normal((32, 48)).astype(np.float32)
    y = np.zeros((64, 48), np.float32)
    relu_product_split(a, b, y)
    np.testing.assert_allclose(y, np.maximum(a @ b, 0), rtol=1e-5, atol=1e-5)
