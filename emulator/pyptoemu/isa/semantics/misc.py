"""Conversion/quantization (§4.9), compare/select (§4.10), gather/concat/index ops and tprint
(§4.11)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ptoisa.dtypes import is_float
from pyptoemu.errors import OperandError
from pyptoemu.isa.arg import Arg
from pyptoemu.isa.ieee import QUIET
from pyptoemu.isa.semantics.common import (
    F32,
    bool_attr,
    compute_dtype,
    convert,
    enum_value,
    finish,
    int_attr,
    region,
    region_reader,
    scalar_as,
)
from pyptoemu.isa.semantics.registry import Run, prepared, semantics

# ------------------------------------------------------------------------------------- conversion


@prepared("convert")
def cvt(ins: list[Arg], outs: list[Arg], attrs: dict[str, Any]) -> Run:
    """tcvt: ``d[i,j] = convert(s[i,j])`` over src's valid region with ``rmode`` (default
    CAST_RINT) and ``sat_mode`` (see :func:`common.convert`)."""
    src, dst = ins[0], outs[0]
    rmode = enum_value(attrs, "rmode", "CAST_RINT")
    sat = enum_value(attrs, "sat_mode")
    read = region_reader(src, src.vrow, src.vcol)
    sname, dname = src.dtype_name, dst.dtype_name

    def run(values: list) -> list[np.ndarray | None]:
        return [convert(read(values[0]), sname, dname, rmode, sat)]

    return run


@semantics("quant")
def quant(ins: list[Arg], outs: list[Arg], attrs: dict[str, Any]) -> list[np.ndarray | None]:
    """tquant: SYM ``sat_i8(rint(s * fp[i,0]))``; ASYM ``sat_u8(rint(s * fp[i,0] + offset[i,0]))``
    (ASYM when a third ins is given or ``quant_type = INT8_ASYM``). Computed in f32."""
    src, fp, dst = ins[0], ins[1], outs[0]
    r, c = src.vrow, src.vcol
    x = region(src, r, c, F32)
    scale = region(fp, r, 1, F32)
    with QUIET:
        y = x * scale
        if len(ins) > 2:
            y = y + region(ins[2], r, 1, F32)
    return [convert(y, "f32", dst.dtype_name, "RINT", "ON")]


@semantics("dequant")
def dequant(ins: list[Arg], outs: list[Arg], attrs: dict[str, Any]) -> list[np.ndarray | None]:
    """tdequant: ``d = (float(s) - offset[i,0]) * scale[i,0]`` over src's valid region."""
    src, scale, offset, dst = ins[0], ins[1], ins[2], outs[0]
    r, c = src.vrow, src.vcol
    with QUIET:
        y = (region(src, r, c, F32) - region(offset, r, 1, F32)) * region(scale, r, 1, F32)
    return [finish(y, dst.dtype_name)]


# ---------------------------------------------------------------------------------- compare/select

CMP = {
    "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
    "gt": np.greater, "ge": np.greater_equal,
}


def _cmp(attrs: dict[str, Any]) -> Any:
    mode = (enum_value(attrs, "cmpMode", "eq") or "eq").lower()
    if mode not in CMP:
        raise OperandError(f"unknown compare mode '{mode}' (known: {', '.join(CMP)})")
    return CMP[mode]


def pack_mask(pred: np.ndarray, mask: Arg) -> np.ndarray:
    """Pack a boolean rows x C predicate into mask rows (§4.10): column j in bit ``j mod w`` of
    element ``j div w`` (w = bits per mask element), least-significant bit first; each mask row is
    zero-filled across its full width first."""
    rows = pred.shape[0]
    packed = np.packbits(pred.astype(np.uint8), axis=1, bitorder="little")
    width_bytes = mask.cols * mask.dtype.itemsize
    if packed.shape[1] > width_bytes:
        raise OperandError(f"mask tile with {mask.cols} {mask.dtype_name} columns holds "
                         f"{width_bytes * 8} predicates per row, need {pred.shape[1]}")
    out = np.zeros((rows, width_bytes), np.uint8)
    out[:, : packed.shape[1]] = packed
    return np.ascontiguousarray(out).view(mask.dtype.newbyteorder("<")).astype(mask.dtype)


def unpack_mask(mask: Arg, rows: int, cols: int) -> np.ndarray:
    """The boolean rows x cols predicate stored in a mask tile (inverse of :func:`pack_mask`)."""
    raw = np.ascontiguousarray(np.asarray(mask.value)[:rows].astype(mask.dtype.newbyteorder("<")))
    bits = np.unpackbits(raw.view(np.uint8), axis=1, bitorder="little")
    if bits.shape[1] < cols:
        raise OperandError(f"mask tile has {bits.shape[1]} predicate bits per row, need {cols}")
    return bits[:, :cols].astype(bool)


@semantics("compare")
def compare(ins: list[Arg], outs: list[Arg], attrs: dict[str, Any]) -> list[np.ndarray | None]:
    """tcmp: ``a[i,j] cmp b[i,j]`` over a's valid region, packed into the mask tile."""
    a, b, m = ins[0], ins[1], outs[0]
    ct = compute_dtype(a.dtype_name)
    pred = _cmp(attrs)(region(a, a.vrow, a.vcol, ct), region(b, a.vrow, a.vcol, ct))
    return [pack_mask(pred, m)]


@semantics("compare_scalar")
def compare_scalar(ins: list[Arg], outs: list[Arg], attrs: dict[str, Any]) -> list[np.ndarray | None]:
    """tcmps: ``a[i,j] cmp s`` (s converted to a's dtype), packed into the mask tile."""
    a, s, m = ins[0], ins[1], outs[0]
    ct = compute_dtype(a.dtype_name)
    sv = np.asarray(scalar_as(s.value, a.dtype_name)).astype(ct)
    pred = _cmp(attrs)(region(a, a.vrow, a.vcol, ct), sv)
    return [pack_mask(pred, m)]


@semantics("select")
def select(ins: list[Arg], outs: list[Arg], attrs: dict[str, Any]) -> list[np.ndarray | None]:
    """tsel: ``d[i,j] = bit(m,i,j) ? a[i,j] : b[i,j]`` over dst's valid region; ins (m, a, b, tmp)."""
    m, a, b, d = ins[0], ins[1], ins[2], outs[0]
    r, c = d.vrow, d.vcol
    pred = unpack_mask(m, r, c)
    return [finish(np.where(pred, region(a, r, c), region(b, r, c)), d.dtype_name)]


@semantics("select_scalar")
def select_scalar(ins: list[Arg], outs: list[Arg], attrs: dict[str, Any]) -> list[np.ndarray | None]:
    """tsels: ``d[i,j] = bit(m,i,j) ? a[i,j] : s``; ins (m, a, tmp, s) - the scalar found by kind."""
    m, a, d = ins[0], ins[1], outs[0]
    s = next(x for x in ins if x.kind == "scalar")
    r, c = d.vrow, d.vcol
    pred = unpack_mask(m, r, c)
    sv = scalar_as(s.value, d.dtype_name)
    return [finish(np.where(pred, region(a, r, c).astype(d.dtype), sv), d.dtype_name)]


# ------------------------------------------------------------------------------------ gather & co

MASK_PATTERNS = {"P0101": (2, 0), "P1010": (2, 1), "P0001": (4, 0), "P0010": (4, 1), "P0100": (4, 2),
                 "P1000": (4, 3), "P1111": (1, 0)}


@semantics("gather")
def gather(ins: list[Arg], outs: list[Arg], attrs: dict[str, Any]) -> list[np.ndarray | None]:
    """tgather in its three forms.

    * index: ins (src, idx[, tmp]) -> ``d[i,j] = src.flat[idx[i,j]]`` (flat = ``r*src.cols + c``)
      over dst's valid region; out of range -> 0.
    * mask (``maskPattern`` attr): keep columns c of src's valid region matching the pattern; row i's
      kept elements packed to the left of row i of d.
    * compare: ins (src, k[, tmp]) with a scalar k, outs (d, cnt): per row, indices ``j + offset`` of
      elements with ``src[i,j] cmp k`` written compactly to row i of d; cnt[i,0] = their number.
    """
    src, d = ins[0], outs[0]
    pattern = enum_value(attrs, "maskPattern")
    if pattern is not None:
        return [_gather_mask(src, d, pattern)]
    if len(ins) > 1 and ins[1].kind == "scalar":
        return _gather_compare(ins, outs, attrs)
    idx = ins[1]
    r, c = d.vrow, d.vcol
    ids = region(idx, r, c).astype(np.int64)
    flat = np.asarray(src.value).reshape(-1)
    ok = (ids >= 0) & (ids < flat.size)
    vals = flat[np.where(ok, ids, 0)]
    return [np.where(ok, vals, np.zeros((), src.dtype)).astype(d.dtype)]


def _gather_mask(src: Arg, d: Arg, pattern: str) -> np.ndarray:
    """Mask form: row i's kept columns packed to the left of row i of d.

    pto-text-format §4.11 says "kept elements written densely, row by row, into d" and pypto-jit
    "kept elements are packed row by row": read as a kernel author does, each source row gives one
    destination row (as the compare form's "written compactly to row i of d"), so a destination
    wider than the kept count (a 16x8 f32 tile holding 16x4 results, its rows padded to 32 bytes)
    keeps its rows apart instead of running row 1 on into the padding of row 0. Where the
    destination is exactly as wide as the kept count both readings agree. Columns of d past the
    kept count are not written."""
    step, phase = MASK_PATTERNS[pattern]
    kept = region(src, src.vrow, src.vcol)[:, phase::step]
    rows, width = kept.shape
    if rows > d.rows or width > d.cols:
        raise OperandError(f"tgather: {rows} rows of {width} kept elements do not fit the {d.rows}x{d.cols} dst")
    return kept.astype(d.dtype)


def _gather_compare(ins: list[Arg], outs: list[Arg], attrs: dict[str, Any]) -> list[np.ndarray | None]:
    src, k, d = ins[0], ins[1], outs[0]
    offset = int_attr(attrs, "offset", 0)
    ct = compute_dtype(src.dtype_name)
    pred = _cmp(attrs)(region(src, src.vrow, src.vcol, ct), np.asarray(scalar_as(k.value, src.dtype_name)).astype(ct))
    out = np.array(np.asarray(d.value)[: src.vrow], dtype=d.dtype, copy=True)
    counts = np.zeros((src.vrow, 1), np.int64)
    for i in range(src.vrow):
        hits = np.nonzero(pred[i])[0] + offset
        if hits.size > d.cols:
            raise OperandError(f"tgather: row {i} has {hits.size} matches, dst has {d.cols} columns")
        out[i, : hits.size] = hits.astype(d.dtype)
        counts[i, 0] = hits.size
    result: list[np.ndarray | None] = [out]
    if len(outs) > 1:
        result.append(finish(counts, outs[1].dtype_name))
    return result


@semantics("concat")
def concat(ins: list[Arg], outs: list[Arg], attrs: dict[str, Any]) -> list[np.ndarray | None]:
    """tconcat: ``d[i, 0:Ca] = a[i, 0:Ca]``, ``d[i, Ca:Ca+Cb] = b[i, 0:Cb]`` (valid cols) for
    ``i < dst.VR``."""
    a, b, d = ins[0], ins[1], outs[0]
    r = d.vrow
    block = np.concatenate([region(a, r, a.vcol), region(b, r, b.vcol)], axis=1)
    return [finish(block, d.dtype_name)]


@semantics("iota")
def iota(ins: list[Arg], outs: list[Arg], attrs: dict[str, Any]) -> list[np.ndarray | None]:
    """tci: ``d[0,j] = s + j`` (``s - j`` with ``descending``) for ``j < d.VC``; wraps in d's dtype."""
    s, d = ins[0], outs[0]
    step = -1 if bool_attr(attrs, "descending", False) else 1
    vals = int(s.value) + step * np.arange(d.vcol, dtype=np.int64)
    if is_float(d.dtype_name):
        return [finish(vals.reshape(1, -1), d.dtype_name)]
    return [vals.reshape(1, -1).astype(d.dtype)]


@semantics("triangle")
def triangle(ins: list[Arg], outs: list[Arg], attrs: dict[str, Any]) -> list[np.ndarray | None]:
    """ttri over dst's valid region: lower (``upperOrLower = 0``, default) ``1 if j <= i + diag``;
    upper (1) ``0 if j < i + diag else 1``."""
    diag, d = int(ins[0].value), outs[0]
    i, j = np.ogrid[: d.vrow, : d.vcol]
    upper = int_attr(attrs, "upperOrLower", 0) == 1
    ones = (j >= i + diag) if upper else (j <= i + diag)
    return [ones.astype(d.dtype)]


# ------------------------------------------------------------------------------------------- print


def format_tile(arg: Arg) -> str:
    """Text of a whole tile or GM window for tprint: floats ``%6.2f``, ints ``%6d``; cells outside
    the valid region are followed by ``*``."""
    values = np.asarray(arg.value)
    floating = is_float(arg.dtype_name)
    head = f"{arg.kind} {arg.loc or '-'} {arg.dtype_name} {arg.rows}x{arg.cols} valid {arg.vrow}x{arg.vcol}"
    if arg.vrow < arg.rows or arg.vcol < arg.cols:
        head += " (* = outside the valid region)"
    lines = [head]
    for i in range(arg.rows):
        cells = []
        for j in range(arg.cols):
            v = values[i, j]
            text = f"{float(v):6.2f}" if floating else f"{int(v):6d}"
            cells.append(text + ("*" if i >= arg.vrow or j >= arg.vcol else " "))
        lines.append(" ".join(cells).rstrip())
    return "\n".join(lines)
