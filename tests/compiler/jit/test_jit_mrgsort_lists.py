"""``pl.mrgsort(s0, s1[, s2[, s3]])``, format 2 (spec pypto-jit §8): sorted record lists merged into one
descending row, checked against NumPy's sort of the joined values; with ``exhausted=True`` the merge
stops when the first list runs out (tmrgsort ``{exhausted = true}``)."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl


@pl.jit
def merge_sorted_chunks(x: pl.Tensor, vals: pl.Out[pl.Tensor], idxs: pl.Out[pl.Tensor], lists: int):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="merge"):
        a = pl.sort32(pl.load(x, [0, 0], [1, 32]), pl.arange(0, [1, 32], dtype=pl.UINT32))
        b = pl.sort32(pl.load(x, [0, 32], [1, 32]), pl.arange(32, [1, 32], dtype=pl.UINT32))
        if lists == 2:
            s = pl.mrgsort(a, b)
        else:
            c = pl.sort32(pl.load(x, [0, 64], [1, 32]), pl.arange(64, [1, 32], dtype=pl.UINT32))
            s = pl.mrgsort(a, b, c)
        vals[:, :] = pl.gather(s, mask_pattern=pl.tile.MaskPattern.P0101)
        idxs[:, :] = pl.gather(s, mask_pattern=pl.tile.MaskPattern.P1010, output_dtype=pl.INT32)


@pytest.mark.parametrize("lists", [2, 3])
def test_format2_merges_sorted_lists_descending(lists):
    n = 32 * lists
    x = (np.random.default_rng(81).permutation(n).astype(np.float32) / 3 - 10).reshape(1, n)
    vals, idxs = np.zeros((1, n), np.float32), np.zeros((1, n), np.int32)
    merge_sorted_chunks(x, vals, idxs, lists)
    order = np.argsort(-x[0], kind="stable")
    np.testing.assert_array_equal(vals[0], x[0, order])
    np.testing.assert_array_equal(idxs[0], order)


@pl.jit
def merge_until_exhausted(x: pl.Tensor, vals: pl.Out[pl.Tensor], exhausted: bool):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="merge_stop"):
        a = pl.sort32(pl.load(x, [0, 0], [1, 32]), pl.arange(0, [1, 32], dtype=pl.UINT32))
        b = pl.sort32(pl.load(x, [0, 32], [1, 32]), pl.arange(32, [1, 32], dtype=pl.UINT32))
        s = pl.mrgsort(a, b, exhausted=exhausted)
        vals[:, :] = pl.gather(s, mask_pattern=pl.tile.MaskPattern.P0101)


def _merged_until_a_list_runs_out(a: np.ndarray, b: np.ndarray) -> list:
    """The descending merge of two descending lists, stopped when the first of them runs out."""
    i = j = 0
    out = []
    while i < len(a) and j < len(b):
        if a[i] >= b[j]:
            out.append(a[i])
            i += 1
        else:
            out.append(b[j])
            j += 1
    return out


def test_exhausted_merge_stops_when_the_first_list_runs_out():
    rng = np.random.default_rng(82)
    x = rng.permutation(64).astype(np.float32).reshape(1, 64)
    x[0, :32] += 16  # list a holds the larger values: it runs out well before b
    a, b = -np.sort(-x[0, :32]), -np.sort(-x[0, 32:])
    stopped = _merged_until_a_list_runs_out(a, b)
    assert 32 <= len(stopped) < 64
    full = -np.sort(-x[0])
    vals = np.full((1, 64), np.nan, np.float32)
    merge_until_exhausted(x, vals, True)
    np.testing.assert_array_equal(vals[0, :len(stopped)], stopped)
    assert not np.array_equal(vals[0, len(stopped):], full[len(stopped):])  # the rest was not merged
    merge_until_exhausted(x, vals, False)
    np.testing.assert_array_equal(vals[0], full)
    assert "exhausted = true" in merge_until_exhausted.compile(x, vals, True).pto["merge_stop"]
    assert "exhausted" not in merge_until_exhausted.compile(x, vals, False).pto["merge_stop"]
