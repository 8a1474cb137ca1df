"""Happens-before race detector over the run's event log.

Vector clocks over the pipes: ``vc[P] = n`` means "the first n instructions issued to pipe P are
known complete". Edges, as the hardware guarantees them:

* program order on a pipe the machine declares in order (its results are forwarded along the pipe);
  on a pipe that is not in order (V on A2/A3) program order orders only the starts, not the writes;
* ``barrier <P>``: every earlier P instruction completes before any later one starts;
* ``set_flag``: every earlier instruction of its source pipe has completed; the ``wait_flag`` that
  consumes it inherits that knowledge, and so does every later instruction of the waiting pipe;
* the scalar unit: an instruction issued after a ``wait_flag`` on PIPE_S, a full barrier or a scalar
  memory access is ordered after it.

Any two accesses to overlapping bytes of one buffer (UB, L1, L0A/B/C, bias, GM per argument), at
least one a write, that are not ordered by these edges are a race. A race is reported once per pair
of source lines, with a count and the smallest fix.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from pyptoemu.core.pipe import BARRIER, OP, SET, WAIT, XSET, XWAIT, Instr

KIND_OF = {(True, False): "RAW", (False, True): "WAR", (True, True): "WAW"}


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


PIPES = ("S", "MTE1", "MTE2", "MTE3", "V", "M", "FIX")
PIPE_INDEX = {p: i for i, p in enumerate(PIPES)}
ZERO = (0,) * len(PIPES)


def _join(a: tuple, b: tuple) -> tuple:
    return a if a == b else tuple(map(max, a, b))


def _bump(vc: tuple, pipe: str, n: int) -> tuple:
    """``vc`` with at least the first ``n`` instructions of ``pipe`` known complete."""
    i = PIPE_INDEX[pipe]
    return vc if vc[i] >= n else vc[:i] + (n,) + vc[i + 1:]


def _releasers(ins: Instr) -> list:
    """The instructions whose completion released a wait (one set_flag, or a cross-core list)."""
    r = ins.released_by
    return [] if r is None else (r if isinstance(r, list) else [r])


def _known(s: Instr) -> int:
    """How many of ``s``'s pipe's instructions a waiter released by ``s`` knows complete: a set
    fires after the earlier ones; a FIFO push or DMA copy releases its waiter at its own completion."""
    return s.pidx + 1 if s.kind == OP else s.pidx


def clocks(core) -> dict[int, tuple]:
    """Vector clock (knowledge at start) of every recorded instruction, keyed by ``id(instr)``:
    entry ``k`` = how many of pipe ``PIPES[k]``'s instructions are known complete."""
    in_order = dict(core.machine.in_order)
    in_order["S"] = True
    epochs = core.scalar.epochs
    epoch_vc: list[tuple] = [ZERO]
    vc: dict[int, tuple] = {}
    prev: dict[str, Instr] = {}

    def scalar_vc(e: int) -> tuple:
        while len(epoch_vc) <= e:
            kind, what = epochs[len(epoch_vc) - 1]
            last = epoch_vc[-1]
            if kind == "wait":
                for setter in _releasers(what):
                    last = _bump(_join(last, vc.get(id(setter), ZERO)), setter.pipe, _known(setter))
            elif kind == "all":
                for pipe, n in what.items():
                    last = _bump(last, pipe, n)
            else:  # "s": scalar accesses so far
                last = _bump(last, "S", what)
            epoch_vc.append(last)
        return epoch_vc[e]

    for ins in sorted((i for i in core.trace_log if i.start >= 0), key=lambda i: (i.start, i.seq)):
        p = ins.pipe
        base = scalar_vc(ins.sepoch)
        before = prev.get(p)
        if before is not None:
            base = _join(base, vc[id(before)])
            if before.kind == BARRIER:
                base = _bump(base, p, before.pidx)
            elif in_order.get(p, True):
                base = _bump(base, p, before.pidx + 1)
        if ins.kind in (BARRIER, SET, XSET):
            base = _bump(base, p, ins.pidx)
        if ins.kind in (WAIT, XWAIT):
            for s in _releasers(ins):
                base = _bump(_join(base, vc.get(id(s), ZERO)), s.pipe, _known(s))
        vc[id(ins)] = base
        prev[p] = ins
    return vc


def _fix(y: Instr, x: Instr, used_ids: dict, n_ids: int) -> str:
    if y.pipe == x.pipe:
        return f"add `pto.barrier <PIPE_{x.pipe}>` between {y.loc} and {x.loc}"
    free = next((i for i in range(n_ids) if i not in used_ids.get((y.pipe, x.pipe), set())), 0)
    flag = f"[<PIPE_{y.pipe}>, <PIPE_{x.pipe}>, <EVENT_ID{free}>]"
    return f"add `pto.set_flag{flag}` after {y.loc} and `pto.wait_flag{flag}` before {x.loc}"


def _report(core, y: Instr, x: Instr, yw: bool, xw: bool, buf: str, olo: int, ohi: int, severity: str,
            used_ids: dict) -> None:
    if y.iseq > x.iseq:  # name the pair in program order, however the pipes happened to run it
        y, x, yw, xw = x, y, xw, yw
    kind = KIND_OF[(yw, xw)] if yw else "WAR"
    core.findings.add(
        "race", severity,
        f"{kind} on {buf} bytes [{olo}, {ohi}): {y.name} ({y.pipe}, {y.loc}) "
        f"{'writes' if yw else 'reads'} and {x.name} ({x.pipe}, {x.loc}) "
        f"{'writes' if xw else 'reads'} with no synchronisation ordering them; "
        f"fix: {_fix(y, x, used_ids, core.machine.event_ids)}",
        [y.loc, x.loc], [y.pipe, x.pipe], cycle=x.start,
        key=(kind, y.loc.line, y.loc.col, x.loc.line, x.loc.col),
        detail={"kind": kind, "buffer": buf, "bytes": [olo, ohi],
                "first": {"op": y.name, "pipe": y.pipe, "line": str(y.loc)},
                "second": {"op": x.name, "pipe": x.pipe, "line": str(x.loc)}},
    )


@lru_cache(maxsize=65536)
def _grid_box(fp: tuple) -> tuple | None:
    """(strides, (row0, row1, col0, col1)) of a 2-D GM window in its strides' grid, else None."""
    b = _box(fp)
    if b is None or len(b[0]) != 2:
        return None
    (r0, c0), (nr, nc), strides = b
    return strides, (r0, r0 + nr, c0, c0 + nc)


class _Live:
    """Earlier accesses of one buffer that later ones must be compared with.

    A plain list while short; above ``VECTOR_FROM`` entries also NumPy columns, so that a new
    access finds the entries that overlap it in one vectorised pass (kernels with thousands of GM
    windows would otherwise spend quadratic Python time here). Two 2-D windows in the same strides'
    grid are compared as boxes; the exact footprint check runs only on the remaining candidates.
    """

    VECTOR_FROM = 64

    def __init__(self) -> None:
        self.rows: list[list] = []  # [lo, hi, write, alive, pipe index, pidx, instr, fp, grid box]
        self.cols: dict[str, np.ndarray] | None = None
        self.built = 0  # rows already copied into cols
        self.grids: dict[tuple, int] = {}

    def add(self, lo: int, hi: int, write: bool, x: Instr, fp) -> None:
        gb = _grid_box(fp) if fp is not None else None
        if gb is not None:
            gb = (self.grids.setdefault(gb[0], len(self.grids)), gb[1])
        self.rows.append([lo, hi, write, True, PIPE_INDEX[x.pipe], x.pidx, x, fp, gb])

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

    def compact(self) -> None:
        """Drop dead entries once they are the majority (keeps the passes short)."""
        alive = [r for r in self.rows if r[3]]
        if len(alive) * 2 <= len(self.rows):
            self.rows = alive
            self.cols, self.built = None, 0


def detect(core, severity: str = "error") -> int:
    """Add a finding per racing pair of source lines; return the number of racing pairs seen."""
    vc = clocks(core)
    used_ids: dict[tuple, set] = {}
    for ins in core.trace_log:
        if ins.kind in (SET, WAIT):
            used_ids.setdefault(ins.flag[:2], set()).add(ins.flag[2])
    # per buffer: earlier reads and earlier writes, kept apart (a read only meets earlier writes)
    live: dict[str, tuple[_Live, _Live]] = {}
    races = 0
    ordered = sorted((i for i in core.trace_log if i.start >= 0 and (i.reads or i.writes)),
                     key=lambda i: (i.start, i.seq))
    for x in ordered:
        kx = vc[id(x)]
        accesses = [(b, lo, hi, fp, False) for b, lo, hi, fp in x.reads] + [
            (b, lo, hi, fp, True) for b, lo, hi, fp in x.writes]
        for buf, lo, hi, fp, xw in accesses:
            pair = live.get(buf)
            if pair is None:
                pair = live[buf] = (_Live(), _Live())
            reads, writes = pair
            for entries, yw in ((writes, True), (reads, False)) if xw else ((writes, True),):
                pruned = False
                for r in entries.overlapping(lo, hi, fp):
                    elo, ehi, _, _, pipe_i, pidx, y, efp, _ = r
                    if y is x or not footprints_overlap(fp, efp):
                        continue
                    ordered_before = kx[pipe_i] > pidx
                    if not ordered_before:
                        races += 1
                        _report(core, y, x, yw, xw, buf, max(lo, elo), min(hi, ehi), severity, used_ids)
                    elif xw and covers(lo, hi, fp, elo, ehi, efp):
                        # an older access covered by a later write ordered after it can go
                        r[3] = False
                        pruned = True
                if pruned:
                    entries.compact()
            (writes if xw else reads).add(lo, hi, xw, x, fp)
    return races


__all__ = ["OP", "WAIT", "clocks", "detect"]
