"""Where two accesses meet: exact overlap of GM windows and tile byte ranges, and the live set.

A GM access is a window ``(base, sizes, strides)`` in elements over its argument; a tile access is a
byte range. Two windows with the same nesting strides are compared as boxes; anything else by their
element sets. :class:`LiveAccesses` keeps the earlier accesses of one buffer that later ones must
still be compared with (the race detector, :mod:`pyptoemu.check.races`, drops the rest).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np


@lru_cache(maxsize=4096)
def _elements(fp: tuple) -> np.ndarray:
    base, sizes, strides = fp
    idx = np.full((1,), base, dtype=np.int64)
    for z, st in zip(sizes, strides, strict=False):
        idx = (idx[:, None] + np.arange(z, dtype=np.int64)[None, :] * st).reshape(-1)
    return np.unique(idx)


def _box(fp: tuple) -> tuple | None:
    """The window as a box of coordinates in its strides' grid, when the strides nest (each
    stride is at least the next one times its extent, and every coordinate stays inside): then two
    windows with the same strides overlap exactly when their boxes do. None when they don't nest."""
    base, sizes, strides = fp
    order = sorted(range(len(strides)), key=lambda i: -strides[i])
    lo, rem = [], base
    for i in order:
        st = strides[i]
        if st <= 0:
            return None
        q, rem = divmod(rem, st)
        lo.append(q)
    for k in range(1, len(order)):
        outer, inner = strides[order[k - 1]], strides[order[k]]
        if lo[k] + sizes[order[k]] > outer // inner or outer % inner:
            return None
    return tuple(lo), tuple(sizes[i] for i in order), tuple(strides[i] for i in order)


@lru_cache(maxsize=16384)
def _fp_overlap(a: tuple, b: tuple) -> bool:
    ba, bb = _box(a), _box(b)
    if ba is not None and bb is not None and ba[2] == bb[2]:
        return all(la < lb + zb and lb < la + za for la, za, lb, zb in zip(ba[0], ba[1], bb[0], bb[1], strict=False))
    return bool(np.intersect1d(_elements(a), _elements(b), assume_unique=True).size)


def footprints_overlap(a: tuple | None, b: tuple | None) -> bool:
    """Exact element overlap of two GM windows (tiles: their byte ranges already decided)."""
    if a is None or b is None or a == b:
        return True
    return _fp_overlap(a, b) if a < b else _fp_overlap(b, a)


def covers(lo: int, hi: int, fp: tuple | None, elo: int, ehi: int, efp: tuple | None) -> bool:
    """Does the access [lo, hi) (footprint fp) include every byte of [elo, ehi) (efp)?"""
    if not (lo <= elo and ehi <= hi):
        return False
    if fp == efp:  # both tiles (None), or the same window
        return True
    if fp is None or efp is None:
        return False
    ba, bb = _box(fp), _box(efp)
    if ba is not None and bb is not None and ba[2] == bb[2]:
        return all(la <= lb and lb + zb <= la + za for la, za, lb, zb in zip(ba[0], ba[1], bb[0], bb[1], strict=False))
    return bool(np.isin(_elements(efp), _elements(fp), assume_unique=True).all())


@lru_cache(maxsize=1024)
def _grid_box(fp: tuple) -> tuple | None:
    """(strides, (row0, row1, col0, col1)) of a 2-D GM window in its strides' grid, else None.

    Asked for when an access is added and when it is looked up, right after each other: a short
    memo serves it (48 cores x 160 tiles: the same hits with 1024 entries as with 65536, and the
    run's peak stays flat instead of growing ~1 MiB per 25k windows until 65536 are held)."""
    b = _box(fp)
    if b is None or len(b[0]) != 2:
        return None
    (r0, c0), (nr, nc), strides = b
    return strides, (r0, r0 + nr, c0, c0 + nc)


class LiveAccesses:
    """Earlier accesses of one buffer that later ones must be compared with.

    A plain list while short; above ``VECTOR_FROM`` entries also NumPy columns, so that a new
    access finds the entries that overlap it in one vectorised pass (kernels with thousands of GM
    windows would otherwise spend quadratic Python time here). Two 2-D windows in the same strides'
    grid are compared as boxes; the exact footprint check runs only on the remaining candidates.
    """

    VECTOR_FROM = 64

    def __init__(self) -> None:
        self.rows: list[list] = []  # [lo, hi, write, alive, pipe index, pidx, access, fp, grid box]
        self.cols: dict[str, np.ndarray] | None = None
        self.built = 0  # rows already copied into cols
        self.grids: dict[tuple, int] = {}

    def add(self, lo: int, hi: int, write: bool, x, fp) -> None:
        gb = _grid_box(fp) if fp is not None else None
        if gb is not None:
            gb = (self.grids.setdefault(gb[0], len(self.grids)), gb[1])
        self.rows.append([lo, hi, write, True, x.pipe_i, x.pidx, x, fp, gb])

    def _columns(self) -> dict[str, np.ndarray]:
        n = len(self.rows)
        cols = self.cols
        if cols is None or len(cols["lo"]) < n:
            cap = max(2 * n, 128)
            new = {"lo": np.empty(cap, np.int64), "hi": np.empty(cap, np.int64),
                   "grid": np.empty(cap, np.int64), "box": np.empty((cap, 4), np.int64)}
            if cols is not None:
                for k, v in new.items():
                    v[: self.built] = cols[k][: self.built]
            self.cols = cols = new
        for i in range(self.built, n):
            r = self.rows[i]
            cols["lo"][i], cols["hi"][i] = r[0], r[1]
            cols["grid"][i] = -1 if r[8] is None else r[8][0]
            if r[8] is not None:
                cols["box"][i] = r[8][1]
        self.built = n
        return cols

    def overlapping(self, lo: int, hi: int, fp) -> list:
        rows = self.rows
        gb = _grid_box(fp) if fp is not None else None
        grid = self.grids.get(gb[0], -2) if gb is not None else -2
        if len(rows) < self.VECTOR_FROM:
            out = []
            for r in rows:
                if r[3] and r[0] < hi and r[1] > lo:
                    if grid >= 0 and r[8] is not None and r[8][0] == grid:
                        a, b = r[8][1], gb[1]
                        if a[0] >= b[1] or a[1] <= b[0] or a[2] >= b[3] or a[3] <= b[2]:
                            continue
                    out.append(r)
            return out
        cols = self._columns()
        n = len(rows)
        m = (cols["lo"][:n] < hi) & (cols["hi"][:n] > lo)
        if grid >= 0:
            box = cols["box"][:n]
            r0, r1, c0, c1 = gb[1]
            apart = (box[:, 0] >= r1) | (box[:, 1] <= r0) | (box[:, 2] >= c1) | (box[:, 3] <= c0)
            m &= ~((cols["grid"][:n] == grid) & apart)
        return [rows[i] for i in np.flatnonzero(m) if rows[i][3]]

    def compact(self, reindex: bool = False) -> None:
        """Drop dead entries once they are the majority (keeps the passes short). ``reindex``: some
        entries changed their bytes (a run grew, :mod:`pyptoemu.check.accessruns`): rebuild the columns."""
        alive = [r for r in self.rows if r[3]]
        if len(alive) * 2 <= len(self.rows):
            self.rows = alive
            self.cols, self.built = None, 0
        elif reindex:
            self.cols, self.built = None, 0

    def forget_known(self, known) -> None:
        """Drop the entries ``known(access)`` says every later access is ordered after."""
        dropped = False
        for r in self.rows:
            if r[3] and known(r[6]):
                r[3] = False
                dropped = True
        if dropped:
            self.compact()


__all__ = ["LiveAccesses", "covers", "footprints_overlap"]
