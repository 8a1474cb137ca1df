"""The compare form of ``pl.gather`` (spec pypto-jit §8): ``idx, cnt = pl.gather(x, kvalue=k,
cmp_mode="gt", out_cols=n, offset=o)`` gives per row the columns (+ o) of the elements that compare
with k, packed to the left, and their count; checked against NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl


@pl.jit
def above(x: pl.Tensor, idx: pl.Out[pl.Tensor], cnt: pl.Out[pl.Tensor], greater: bool, offset: int):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="pick"):
        t = pl.load(x, [0, 0], [4, 64])
        if greater:
            i, c = pl.gather(t, kvalue=0.25, cmp_mode="gt", out_cols=64, offset=offset)
        else:
            i, c = pl.gather(t, kvalue=0.25, cmp_mode="eq", out_cols=64, offset=offset)
        pl.store(i, [0, 0], idx)
        pl.store(c, [0, 0], cnt)


@pytest.mark.parametrize(("mode", "offset"), [("gt", 0), ("eq", 7)])
def test_compare_gather_gives_the_matching_columns_and_their_count(mode, offset):
    rng = np.random.default_rng(101)
    x = rng.choice(np.array([-1.0, 0.25, 0.5, 2.0], np.float32), size=(4, 64))
    idx = np.full((4, 64), -1, np.int32)
    cnt = np.zeros((4, 1), np.int32)
    above(x, idx, cnt, mode == "gt", offset)
    hit = x > 0.25 if mode == "gt" else x == 0.25
    for r in range(4):
        cols = np.nonzero(hit[r])[0] + offset
        assert cnt[r, 0] == cols.size
        np.testing.assert_array_equal(idx[r, :cols.size], cols)
