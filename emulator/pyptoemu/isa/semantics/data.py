"""Sort records, merge, histogram, Philox random numbers, byte-offset gather, column scatter and
pack (§4.11, §4.2 tpack), and the GM gather/scatter mgather/mscatter (§4.2).

Sort records (tsort32 output, tmrgsort input/output) are 8 bytes, little-endian: the value in bytes
0..3 (an f16 value in bytes 0..1, bytes 2..3 zero) and the u32 index in bytes 4..7. A record tile
has the VALUE dtype (f32: 2 cells per record, f16: 4 cells per record); the index cells hold the
index bits, so reading them as the tile dtype is a reinterpretation, never a conversion.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pyptoemu.errors import BoundsError, OperandError
from pyptoemu.isa.arg import Arg
from pyptoemu.isa.ieee import QUIET
from pyptoemu.isa.semantics.common import bool_attr, convert, enum_value, int_attr, region
from pyptoemu.isa.semantics.registry import semantics

RECORD_BYTES = 8
SORT_BLOCK = 32
_U32 = np.dtype("<u4")
_UINT = {1: np.dtype(np.uint8), 2: np.dtype("<u2"), 4: _U32, 8: np.dtype("<u8")}


def _to_bytes(values: np.ndarray) -> np.ndarray:
    """The little-endian bytes of ``values`` (rows x n elements) as a rows x n x esize uint8 array,
    independent of the host byte order (integer view, then explicit little-endian)."""
    arr = np.ascontiguousarray(values)
    es = arr.dtype.itemsize
    bits = arr.view(np.dtype(f"u{es}")).astype(_UINT[es])
    return bits.view(np.uint8).reshape(*arr.shape, es)


def _from_bytes(raw: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Inverse of :func:`_to_bytes`: the last axis (esize little-endian bytes) becomes one element."""
    es = dtype.itemsize
    raw = np.ascontiguousarray(raw, dtype=np.uint8)
    bits = raw.view(_UINT[es]).reshape(raw.shape[:-1]).astype(np.dtype(f"u{es}"))
    return bits.view(dtype)


def _record_dtypes(src: Arg, dst: Arg, op: str) -> None:
    if src.dtype_name not in ("f16", "f32"):
        raise OperandError(f"{op}: sort values must be f16 or f32, got {src.dtype_name}")
    if dst.dtype.itemsize != src.dtype.itemsize:
        raise OperandError(f"{op}: the record tile must have the value's element size ({src.dtype_name}), "
                         f"got {dst.dtype_name}")


# ------------------------------------------------------------------------------------------ sort


@semantics("sort32")
def sort32(ins: list[Arg], outs: list[Arg], attrs: dict[str, Any]) -> list[np.ndarray | None]:
    """tsort32 ins(src, idx[, tmp]) outs(d): per row of src's valid region and per 32-element block,
    the (src[i,j], idx[i,j]) pairs sorted by value descending (stable: equal values keep their
    column order; NaN sorts last), written as 8-byte records, so d has 2x (f32) / 4x (f16) the
    columns of the sorted blocks.

    Without tmp src.VC must be a multiple of 32. With tmp the tail block is completed with -inf
    values whose index is read from the idx tile beyond its valid region (the hardware reads the
    index buffer; columns past the idx tile's width read 0), and the whole padded block is written.
    A one-row idx tile serves every row (the usual ``tci`` index row); otherwise idx has a row per
    src row.
    """
    src, idx, dst = ins[0], ins[1], outs[0]
    _record_dtypes(src, dst, "tsort32")
    r, c = src.vrow, src.vcol
    if c % SORT_BLOCK and len(ins) < 3:
        raise OperandError(f"tsort32 without a tmp tile needs src valid cols % 32 == 0, got {c}")
    width = -(-c // SORT_BLOCK) * SORT_BLOCK
    cells = RECORD_BYTES // src.dtype.itemsize
    if dst.cols < width * cells:
        raise OperandError(f"tsort32: {r}x{width} records need {width * cells} dst columns, dst has {dst.cols}")
    vals = np.full((r, width), -np.inf, dtype=src.dtype)
    vals[:, :c] = region(src, r, c)
    idx_all = np.asarray(idx.value)
    if idx.rows == 1:
        idx_rows = np.broadcast_to(idx_all[:1], (r, idx.cols))
    elif idx.rows >= r:
        idx_rows = idx_all[:r]
    else:
        raise OperandError(f"tsort32: idx tile has {idx.rows} rows, src has {r} valid rows (need 1 or >= {r})")
    ids = np.zeros((r, width), dtype=np.uint32)
    n_idx = min(width, idx.cols)
    ids[:, :n_idx] = idx_rows[:, :n_idx].astype(np.int64).astype(np.uint32)
    blocks = width // SORT_BLOCK
    key = -vals.astype(np.float64).reshape(r, blocks, SORT_BLOCK)
    order = np.argsort(key, axis=2, kind="stable")
    sorted_vals = np.take_along_axis(vals.reshape(r, blocks, SORT_BLOCK), order, axis=2).reshape(r, width)
    sorted_ids = np.take_along_axis(ids.reshape(r, blocks, SORT_BLOCK), order, axis=2).reshape(r, width)
    raw = np.zeros((r, width, RECORD_BYTES), np.uint8)
    raw[:, :, : src.dtype.itemsize] = _to_bytes(sorted_vals)
    raw[:, :, 4:] = _to_bytes(sorted_ids)
    return [_from_bytes(raw.reshape(r, width * cells, src.dtype.itemsize), dst.dtype)]


@semantics("merge_sort")
def merge_sort(ins: list[Arg], outs: list[Arg], attrs: dict[str, Any]) -> list[np.ndarray | None]:
    """tmrgsort format 1, ins(src, blockLen) outs(d): each row of src's valid region holds 4
    consecutive runs of ``blockLen`` cells (tile elements, so 32 f32 records = one tsort32 block =
    64 cells; a multiple of 64 as §4.11 requires) and src.VC == 4 * blockLen. The runs are merged
    descending by value into d: a true 4-way merge (the runs are assumed sorted, as the hardware
    assumes), ties taken from the lower-numbered run first. Records move as whole 8-byte units, so
    index bits (and f16 padding bytes) are preserved exactly.

    Format 2 (2-4 record lists) is :func:`merge_lists`.
    """
    if len(ins) >= 3 and ins[1].kind != "scalar":
        return merge_lists(ins, outs, attrs)
    if len(ins) != 2 or ins[1].kind != "scalar" or len(outs) > 1:
        raise OperandError("tmrgsort takes ins(src, blockLen) (format 1) or ins(s0, s1[, s2[, s3]], tmp) (format 2)")
    src, dst = ins[0], outs[0]
    _record_dtypes(src, dst, "tmrgsort")
    block_len = int(ins[1].value)
    r, c = src.vrow, src.vcol
    if block_len <= 0 or block_len % 64:
        raise OperandError(f"tmrgsort: blockLen must be a positive multiple of 64, got {block_len}")
    if c != 4 * block_len:
        raise OperandError(f"tmrgsort: src valid cols {c} != 4 * blockLen ({4 * block_len})")
    if dst.cols < c:
        raise OperandError(f"tmrgsort: dst has {dst.cols} columns, the merge writes {c}")
    es = src.dtype.itemsize
    cells = RECORD_BYTES // es
    raw = _to_bytes(region(src, r, c)).reshape(r, c // cells, RECORD_BYTES)
    keys = _from_bytes(raw[:, :, :es], src.dtype).astype(np.float64)
    run = block_len // cells
    out = np.empty_like(raw)
    for i in range(r):
        out[i] = raw[i, _merge_order(keys[i], run)]
    return [_from_bytes(out.reshape(r, c, es), dst.dtype)]


def merge_lists(ins: list[Arg], outs: list[Arg], attrs: dict[str, Any]) -> list[np.ndarray | None]:
    """tmrgsort format 2, ins(s0, s1[, s2[, s3]], tmp) outs(d): 2 to 4 one-row lists of sorted 8-byte
    records (each list's valid columns) merged descending into the front of d's row 0, ties from the
    lower-numbered list first. The last ``ins`` operand is the scratch tile (pto-text-format §4.11).
    With ``exhausted = true`` the merge stops when the first list runs out; the rest of d is left as
    it was. Columns of d past the merged records keep their contents.

    The executed-count out (``outs(%d, %exec)``, a ``vector<4xi16>``) is accepted and left as it is:
    no op of the format reads a ``vector<4xi16>`` (§2: it exists only as this out and its constants),
    so the counts are not observable in a kernel."""
    if len(outs) > 2:
        raise OperandError("tmrgsort format 2 has outs(%d) or outs(%d, %exec)")
    lists, dst = ins[:-1], outs[0]
    if not 2 <= len(lists) <= 4:
        raise OperandError(f"tmrgsort format 2 merges 2 to 4 lists, got {len(lists)} (the last ins is the tmp tile)")
    dt = lists[0].dtype
    for a in (*lists, dst):
        _record_dtypes(lists[0], a, "tmrgsort")
        if a.dtype != dt:
            raise OperandError("tmrgsort format 2: every list and the destination need one dtype")
    es = dt.itemsize
    cells = RECORD_BYTES // es
    records, keys = [], []
    for k, a in enumerate(lists):
        if a.vcol % cells:
            raise OperandError(f"tmrgsort format 2: list {k} has {a.vcol} valid columns, not whole records of "
                               f"{cells} cells")
        raw = _to_bytes(np.ascontiguousarray(a.value[:1, : a.vcol])).reshape(a.vcol // cells, RECORD_BYTES)
        records.append(raw)
        keys.append(_from_bytes(raw[:, :es], dt).astype(np.float64).reshape(-1))
    heads = [0] * len(lists)
    order: list[tuple[int, int]] = []
    while True:
        live = [k for k in range(len(lists)) if heads[k] < len(keys[k])]
        if not live or (attrs.get("exhausted") and len(live) < len(lists)):
            break
        best = max(live, key=lambda k: (keys[k][heads[k]], -k))
        order.append((best, heads[best]))
        heads[best] += 1
    if dst.cols < len(order) * cells:
        raise OperandError(f"tmrgsort format 2: the merge writes {len(order) * cells} columns, d has {dst.cols}")
    out = np.array(dst.value, copy=True)
    merged = np.stack([records[k][i] for k, i in order]) if order else np.zeros((0, RECORD_BYTES), np.uint8)
    out[0, : len(order) * cells] = _from_bytes(merged.reshape(1, -1, es), dst.dtype).reshape(-1)
    return [out] + [None] * (len(outs) - 1)  # %exec: left as it is (see above)


def _merge_order(keys: np.ndarray, run: int) -> list[int]:
    """Record positions in the order a 4-way descending merge of ``keys`` (4 runs of ``run``
    records) emits them; on equal heads the lowest run wins."""
    heads = [k * run for k in range(4)]
    ends = [(k + 1) * run for k in range(4)]
    order: list[int] = []
    for _ in range(4 * run):
        best = -1
        for k in range(4):
            if heads[k] < ends[k] and (best < 0 or keys[heads[k]] > keys[heads[best]]):
                best = k
        order.append(heads[best])
        heads[best] += 1
    return order


# ------------------------------------------------------------------------------------- histogram


@semantics("histogram")
def histogram(ins: list[Arg], outs: list[Arg], attrs: dict[str, Any]) -> list[np.ndarray | None]:
    """thistogram ins(src ui16, idx ui8) outs(d ui32): per row i of src's valid region,
    ``d[i,b]`` (b < 256) = number of j < src.VC whose selected byte equals b. ``isMSB = true``
    (default): the high byte, every element counted; ``false``: the low byte, counting only
    elements whose high byte equals ``idx[i,0]``. d's columns from 256 on are not written."""
    src, idx, dst = ins[0], ins[1], outs[0]
    if src.dtype.itemsize != 2:
        raise OperandError(f"thistogram: src must be a 16-bit type, got {src.dtype_name}")
    if dst.cols < 256:
        raise OperandError(f"thistogram: dst needs >= 256 columns, has {dst.cols}")
    r, c = src.vrow, src.vcol
    x = region(src, r, c).view(np.uint16).astype(np.int64)
    high, low = x >> 8, x & 0xFF
    if bool_attr(attrs, "isMSB", True):
        selected, keep = high, np.ones_like(high, dtype=bool)
    else:
        want = region(idx, r, 1).astype(np.int64) & 0xFF
        selected, keep = low, high == want
    counts = np.zeros((r, 256), np.int64)
    for i in range(r):
        counts[i] = np.bincount(selected[i][keep[i]], minlength=256)
    return [counts.astype(dst.dtype)]


# ---------------------------------------------------------------------------------------- random

PHILOX_M = (0xD2511F53, 0xCD9E8D57)
PHILOX_W = (0x9E3779B9, 0xBB67AE85)
_MASK32 = np.uint64(0xFFFFFFFF)


def philox4x32(counters: np.ndarray, key: tuple[int, int], rounds: int = 10) -> np.ndarray:
    """Philox-4x32-R (Salmon et al., SC'11; Random123): ``counters`` n x 4 u32 words -> n x 4 u32
    words. Round: ``(hi(M1*c2)^c1^k0, lo(M1*c2), hi(M0*c0)^c3^k1, lo(M0*c0))``; the key is bumped by
    the Weyl constants before every round but the first."""
    c = [np.asarray(counters[:, w], dtype=np.uint64) for w in range(4)]
    k0, k1 = np.uint64(key[0] & 0xFFFFFFFF), np.uint64(key[1] & 0xFFFFFFFF)
    m0, m1, sh = np.uint64(PHILOX_M[0]), np.uint64(PHILOX_M[1]), np.uint64(32)
    for rnd in range(rounds):
        if rnd:
            k0 = (k0 + np.uint64(PHILOX_W[0])) & _MASK32
            k1 = (k1 + np.uint64(PHILOX_W[1])) & _MASK32
        p0, p1 = m0 * c[0], m1 * c[2]  # < 2**64: exact in uint64
        c = [(p1 >> sh) ^ c[1] ^ k0, p1 & _MASK32, (p0 >> sh) ^ c[3] ^ k1, p0 & _MASK32]
    return np.stack(c, axis=1).astype(np.uint32)


@semantics("random_fill")
def random_fill(ins: list[Arg], outs: list[Arg], attrs: dict[str, Any]) -> list[np.ndarray | None]:
    """trandom ins(k0, k1, c0, c1, c2, c3 {rounds}) outs(d): Philox-4x32 (``rounds`` 7 or 10,
    default 10) with key (k0, k1) fills d's valid region row-major. Element n (row-major position)
    is word ``n % 4`` of the block whose counter is ``(c0, c1, c2, c3) + n // 4`` (a 128-bit
    little-endian counter: c0 is the low word, carries propagate). The u32 words are stored as bits
    (an i32 dst sees them reinterpreted)."""
    words = [int(a.value) & 0xFFFFFFFF for a in ins[:6]]
    rounds = int_attr(attrs, "rounds", 10)
    if rounds not in (7, 10):
        raise OperandError(f"trandom: rounds must be 7 or 10, got {rounds}")
    dst = outs[0]
    if dst.dtype.itemsize != 4:
        raise OperandError(f"trandom fills 32-bit words (i32/ui32), not {dst.dtype_name}")
    r, c = dst.vrow, dst.vcol
    n = r * c
    nblocks = -(-n // 4)
    ctr = np.zeros((nblocks, 4), np.uint64)
    carry = np.arange(nblocks, dtype=np.uint64)
    for w in range(4):
        total = np.uint64(words[2 + w]) + carry
        ctr[:, w] = total & _MASK32
        carry = total >> np.uint64(32)
    out = philox4x32(ctr, (words[0], words[1]), rounds).reshape(-1)[:n]
    return [out.reshape(r, c).view(dst.dtype)]


# -------------------------------------------------------------------------- byte gather / scatter


@semantics("gather_bytes")
def gather_bytes(ins: list[Arg], outs: list[Arg], attrs: dict[str, Any]) -> list[np.ndarray | None]:
    """tgatherb ins(src, off) outs(d): over d's valid region, ``d[i,j]`` = the d-typed element
    whose bytes start at byte offset ``off[i,j]`` from src's base; src's bytes are its row-major
    logical array (the layout of the ND vec tiles the op takes). Any offset is allowed (unaligned
    ones read across element boundaries); an element reaching outside src is a bounds fault."""
    src, off, dst = ins[0], ins[1], outs[0]
    r, c = dst.vrow, dst.vcol
    offs = region(off, r, c).astype(np.int64)
    raw = _to_bytes(np.asarray(src.value)).reshape(-1)
    es = dst.dtype.itemsize
    bad = (offs < 0) | (offs + es > raw.size)
    if bad.any():
        i, j = (int(v) for v in np.argwhere(bad)[0])
        raise BoundsError(f"tgatherb: byte offset {int(offs[i, j])} at ({i}, {j}) reads outside the "
                          f"{raw.size}-byte source tile")
    picked = raw[offs[..., None] + np.arange(es)]
    return [_from_bytes(picked, dst.dtype)]


def _cast(values: np.ndarray, src: Arg, dst_dtype_name: str) -> np.ndarray:
    """``values`` in the destination dtype: a copy when equal, else tcvt's conversion."""
    if src.dtype_name == dst_dtype_name:
        return np.array(values, copy=True)
    return convert(values, src.dtype_name, dst_dtype_name)


@semantics("scatter")
def scatter(ins: list[Arg], outs: list[Arg], attrs: dict[str, Any]) -> list[np.ndarray | None]:
    """tscatter ins(src, idx) outs(d): ``d[idx[i,j], j] = src[i,j]`` over src's valid region;
    when several sources hit one cell the last in row-major order wins. Target rows must lie in
    d's shape (a bounds fault otherwise); the rest of d keeps its contents."""
    src, idx, dst = ins[0], ins[1], outs[0]
    r, c = src.vrow, src.vcol
    if c > dst.cols:
        raise BoundsError(f"tscatter: src has {c} valid columns, dst only {dst.cols}")
    rows = region(idx, r, c).astype(np.int64)
    bad = (rows < 0) | (rows >= dst.rows)
    if bad.any():
        i, j = (int(v) for v in np.argwhere(bad)[0])
        raise BoundsError(f"tscatter: idx[{i},{j}] = {int(rows[i, j])} is outside dst's {dst.rows} rows")
    vals = _cast(region(src, r, c), src, dst.dtype_name)
    out = np.array(dst.value, dtype=dst.dtype, copy=True)
    cols = np.arange(c)
    for i in range(r):  # one source row has distinct target columns: row order = write order
        out[rows[i], cols] = vals[i]
    return [out]


@semantics("pack")
def pack(ins: list[Arg], outs: list[Arg], attrs: dict[str, Any]) -> list[np.ndarray | None]:
    """tpack: over src's valid region, each element keeps the low-order bytes of its bit pattern
    (4->2, 4->1, 2->1 bytes), reinterpreted as d's dtype - integer truncation (two's complement
    wrap), never a value conversion, also for float types (tcvt converts values)."""
    src, dst = ins[0], outs[0]
    se, de = src.dtype.itemsize, dst.dtype.itemsize
    if (se, de) not in ((4, 2), (4, 1), (2, 1)):
        raise OperandError(f"tpack narrows 4->2, 4->1 or 2->1 bytes, not {src.dtype_name} ({se}) -> "
                         f"{dst.dtype_name} ({de})")
    block = np.ascontiguousarray(region(src, src.vrow, src.vcol))
    bits = block.view(np.dtype(f"u{se}")).astype(np.uint64) & np.uint64((1 << (8 * de)) - 1)
    return [bits.astype(np.dtype(f"u{de}")).view(dst.dtype)]


# ------------------------------------------------------------------------------- GM gather/scatter

GATHER_OOB = ("undefined", "clamp", "wrap", "zero")
SCATTER_OOB = ("undefined", "skip", "clamp", "wrap")
SCATTER_OPS = ("none", "add", "max", "min")


@semantics("gather_gm")
def gather_gm(ins: list[Arg], outs: list[Arg], attrs: dict[str, Any]) -> list[np.ndarray | None]:
    """mgather ins(mem, idx) outs(d): ``d[i,j] = mem[idx[i,j]]`` over d's valid region, mem = the
    GM view's window flattened row-major (n elements). ``gatherOob``: clamp to [0, n-1], wrap
    (idx mod n, also for negative idx), zero (0 for out-of-range), undefined (default): an
    out-of-range index is a bounds fault, the emulator's reading of "undefined"."""
    mem, idx, dst = ins[0], ins[1], outs[0]
    flat = np.asarray(mem.value).reshape(-1)
    n = flat.size
    ids = region(idx, dst.vrow, dst.vcol).astype(np.int64)
    mode = enum_value(attrs, "gatherOob", "undefined")
    if mode not in GATHER_OOB:
        raise OperandError(f"mgather: unknown gatherOob '{mode}' (known: {', '.join(GATHER_OOB)})")
    oob = (ids < 0) | (ids >= n)
    if mode == "clamp":
        ids = np.clip(ids, 0, n - 1)
    elif mode == "wrap":
        ids = ids % n
    elif oob.any() and mode == "undefined":
        i, j = (int(v) for v in np.argwhere(oob)[0])
        raise BoundsError(f"mgather: idx[{i},{j}] = {int(ids[i, j])} is outside the {n}-element GM view")
    vals = flat[np.where(oob, 0, ids) if mode == "zero" else ids]
    if mode == "zero":
        vals = np.where(oob, np.zeros((), flat.dtype), vals)
    return [_cast(vals, mem, dst.dtype_name)]


@semantics("scatter_gm")
def scatter_gm(ins: list[Arg], outs: list[Arg], attrs: dict[str, Any]) -> list[np.ndarray | None]:
    """mscatter ins(src, idx) outs(mem): over src's valid region in row-major order,
    ``mem[idx[i,j]] (op)= src[i,j]`` on the GM view's window flattened row-major; returns the whole
    updated window. ``scatterAtomicOp``: none (plain store, the last writer in row-major order
    wins), add (one rounded add in mem's dtype per element, in row-major order; integers wrap), max,
    min. ``scatterOob``: skip (drop the element), clamp, wrap (mod n), undefined (default): a bounds
    fault."""
    src, idx, mem = ins[0], ins[1], outs[0]
    r, c = src.vrow, src.vcol
    out = np.array(mem.value, dtype=mem.dtype, copy=True)
    flat = out.reshape(-1)
    n = flat.size
    ids = region(idx, r, c).astype(np.int64).reshape(-1)
    vals = _cast(region(src, r, c), src, mem.dtype_name).reshape(-1)
    mode = enum_value(attrs, "scatterOob", "undefined")
    op = enum_value(attrs, "scatterAtomicOp", "none")
    if mode not in SCATTER_OOB:
        raise OperandError(f"mscatter: unknown scatterOob '{mode}' (known: {', '.join(SCATTER_OOB)})")
    if op not in SCATTER_OPS:
        raise OperandError(f"mscatter: unknown scatterAtomicOp '{op}' (known: {', '.join(SCATTER_OPS)})")
    oob = (ids < 0) | (ids >= n)
    if mode == "skip":
        ids, vals = ids[~oob], vals[~oob]
    elif mode == "clamp":
        ids = np.clip(ids, 0, n - 1)
    elif mode == "wrap":
        ids = ids % n
    elif oob.any():
        k = int(np.argmax(oob))
        raise BoundsError(f"mscatter: idx[{k // c},{k % c}] = {int(ids[k])} is outside the {n}-element GM view")
    with QUIET:
        if op == "none":
            last = ids.size - 1 - np.unique(ids[::-1], return_index=True)[1]  # last occurrence per target
            flat[ids[last]] = vals[last]
        elif op == "add":
            np.add.at(flat, ids, vals)  # ufunc.at applies the adds one by one, in index order
        elif op == "max":
            np.maximum.at(flat, ids, vals)
        else:
            np.minimum.at(flat, ids, vals)
    return [out]
