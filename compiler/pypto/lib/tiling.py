"""Tile sizes for any tensor shape, from the machine's buffer capacity.

The rule (every number comes from the Vec buffer (UB) record of the machine file through
``pypto.enums.CAPACITY``, itself read by ``ptoisa.machine``; nothing here is a machine number):

* **One plan for all vector primitives** (element-wise ops, row reductions, composites): the block
  of a ``[R, C]`` tensor depends on its shape and dtypes only, not on which op reads it, so that
  consecutive library calls over one shape loop over the same blocks and FuseLoops merges their
  loops (issue 12). A tile is at most **a sixth of the UB** (32 KiB on a2a3): the few tiles of a
  fused block that are live at once (after memory reuse) fit with room for the reductions' scratch,
  and a loop has several blocks for MTE2, V and MTE3 to overlap. (:data:`SHARED_LIVE` = 3 tiles of
  the half-UB budget is that same cap; the layout ops, which run alone, pass their own count.)
* A block is ``[tr, tc]`` elements over the 2-D view ``[R, C]`` of the data (rows x the last axis).
  Columns are padded to the 32-byte row alignment of a vector tile (``tc`` a multiple of
  ``32 / sizeof``); rows to 8 when a row vector (``[tr, 1]``, column-major) is involved, since its
  storage is one 32-byte block per 8 rows.
* Whole rows first: ``tc`` is all of ``C`` (padded) if ``row_align`` such rows fit one tile; the
  rows per block ``tr`` are then the most that fit (at most ``R`` rounded up to the row alignment).
* A row that does not fit is split into column chunks of the widest ``tc`` that fits with
  ``row_align`` rows (``tr = row_align``): element-wise ops simply iterate over the 2-D grid, row
  reductions and the composites built on them run a **two-level loop** (an outer loop over row
  blocks, inner loops over column chunks carrying the partial reductions as ``[tr, 1]`` tiles).
* A row count only known at run time (a ``pl.dynamic`` dim) keeps the block of a large tensor (``tr``
  not capped by the rows) and one loop over the row offsets ``range(0, rows, tr)``, each block's
  valid rows ``min(rows - offset, tr)`` at run time.
* A last axis only known at run time is taken as a row that does not fit: column chunks of the
  widest ``tc`` that fits with :data:`DYNAMIC_COL_ROWS` rows, one loop ``range(0, cols, tc)`` over them
  with run-time valid columns ``min(cols - offset, tc)`` (the tile's width is static, its valid width
  is not).
* The last block along an axis that does not divide evenly is a **tail**: it has the same tile shape
  and a smaller static valid shape (``valid_row`` / ``valid_col``), so loads, ops and stores touch
  only real data; where a consumer reads the padding the tile is padded with the consumer's
  identity (``pad_for``: zero for sum, -inf for max, +inf for min).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from pypto.dtype import DataType
from pypto.enums import CAPACITY, MemorySpace, TilePad
from pypto.errors import CompileError, Span

ROW_BYTES = 32  # a vector tile row and a row vector's column are stored in 32-byte blocks (pto-text-format §5)
MIN_ROW_ALIGN = 8  # rows of a [tr, 1] row vector per 32-byte block of fp32 (its storage unit)
# The live-tile count of the shared plan: every element-wise op, row reduction and composite over one
# shape plans with it, so that consecutive library calls get the same blocks and FuseLoops can merge
# their loops (half the UB over 3 tiles is more than a sixth of it: the tile cap decides).
SHARED_LIVE = 3
# Rows of a block over a run-time width (a policy, not a machine number): the width is unknown, so the
# block is neither a row strip (a narrow tensor would fill a few elements of each) nor one wide column
# chunk per row (a column reduction of a tall tensor would walk it row by row); fp32 gets 32 x 256.
DYNAMIC_COL_ROWS = 32


def ceil_to(n: int, m: int) -> int:
    return -(-n // m) * m


def budget_bytes() -> int:
    """Bytes all live tiles of one block may take: half the UB."""
    return CAPACITY[MemorySpace.Vec] // 2


def max_tile_bytes() -> int:
    """Bytes one tile may take: a sixth of the UB."""
    return CAPACITY[MemorySpace.Vec] // 6


def col_align(dtype: DataType) -> int:
    return max(1, ROW_BYTES // dtype.nbytes)


def row_align(dtype: DataType) -> int:
    return max(MIN_ROW_ALIGN, ROW_BYTES // dtype.nbytes)


@dataclass(frozen=True)
class Plan:
    """A ``[tr, tc]`` block over ``[rows, cols]``; ``chunked`` when a row needs several blocks;
    ``rows`` is an expression when the row count is only known at run time (``dynamic_rows``)."""

    rows: Any
    cols: int
    tr: int
    tc: int

    @property
    def chunked(self) -> bool:
        return self.dynamic_cols or self.tc < self.cols

    @property
    def dynamic_rows(self) -> bool:
        return not isinstance(self.rows, int)

    @property
    def dynamic_cols(self) -> bool:
        return not isinstance(self.cols, int)

    def segments(self, axis: int) -> list[tuple[int, int, int]]:
        """``(start, count, valid)`` runs along rows (0) or columns (1): ``count`` full blocks from
        ``start`` (a loop when more than one), then the tail block with ``valid`` < the block size."""
        extent, t = (self.rows, self.tr) if axis == 0 else (self.cols, self.tc)
        n, rem = divmod(extent, t)
        out = [(0, n, t)] if n else []
        if rem:
            out.append((n * t, 1, rem))
        return out


# The live-tile count of the shared plan in the kernel being expanded: SHARED_LIVE, or more when one of
# its ops keeps more tiles live per block (the exact INT32 division); every shared-plan op of that kernel
# then plans with it, so they still get the same blocks and fuse (see kernel_live).
_KERNEL_LIVE: ContextVar[int] = ContextVar("kernel_live", default=SHARED_LIVE)


@contextmanager
def kernel_live(live: int) -> Iterator[None]:
    """Plan every shared-plan op expanded inside with ``max(SHARED_LIVE, live)`` live tiles: the most
    any op of the kernel needs (smaller blocks for all of them rather than a plan of its own for one,
    which FuseLoops could not merge with its neighbours)."""
    token = _KERNEL_LIVE.set(max(SHARED_LIVE, live))
    try:
        yield
    finally:
        _KERNEL_LIVE.reset(token)


def plan(rows: int, cols: int, dtypes: list[DataType], live: int | None = None, *, row_vectors: bool = True,
         span: Span | None = None) -> Plan:
    """The block for ``live`` tiles over ``[rows, cols]``: sized by the widest of ``dtypes``, aligned
    for the narrowest. The default (``None``) is the shared plan of the vector primitives (see the
    module docstring), with the kernel's live count (:func:`kernel_live`)."""
    if live is None:
        live = _KERNEL_LIVE.get()
    dynamic = not isinstance(rows, int)
    dynamic_cols = not isinstance(cols, int)
    if (not dynamic and rows <= 0) or (not dynamic_cols and cols <= 0):
        raise CompileError(f"cannot tile an empty [{rows}, {cols}] tensor", span)
    dtype = max(dtypes, key=lambda d: d.nbytes)
    narrow = min(dtypes, key=lambda d: d.nbytes)
    nbytes = dtype.nbytes
    ca = col_align(narrow)
    ra = row_align(narrow) if row_vectors else 1
    budget = budget_bytes() // live
    tile_cap = min(budget, max_tile_bytes())
    cp = None if dynamic_cols else ceil_to(cols, ca)
    if cp is not None and ra * cp * nbytes <= tile_cap:
        tc = cp
    elif cp is None:  # a run-time width: DYNAMIC_COL_ROWS rows of the widest chunk that leaves room for them
        block_rows = ra if rows == 1 else max(ra, DYNAMIC_COL_ROWS)  # (one row, a vector: the widest chunk)
        tc = max(ca, (tile_cap // (block_rows * nbytes)) // ca * ca)
    else:
        tc = (tile_cap // (ra * nbytes)) // ca * ca
        if tc < ca:
            raise CompileError(f"{live} tiles of {ra} x {ca} {dtype.name} do not fit in the UB", span)
    tr = max(ra, (tile_cap // (tc * nbytes)) // ra * ra)
    if not dynamic:  # a run-time row count keeps the full block (its valid rows are set per block)
        tr = min(tr, ceil_to(rows, ra)) if rows > 1 else 1  # one row: [1, tc] tiles, broadcast like NumPy
    return Plan(rows, cols, tr, tc)


def pad_for(reduce: str) -> TilePad:
    """The pad value a reduction's input needs outside its valid region (its identity)."""
    return {"sum": TilePad.zero, "max": TilePad.min, "min": TilePad.max}[reduce]
