"""Tile data ops of the jit-era surface (spec pypto-jit §6-§8): element access, windows, joins,
zero-copy transposed views, sort, mask gathers and index rows.

Each op lowers to one instruction of the ISA spec (``tgetval``, ``tsetval``, ``load_scalar``,
``store_scalar``, ``textract``, ``tconcat``, ``treshape``, ``tsort32``, ``tmrgsort``, ``tgather``,
``tci``; the table is in :mod:`pypto.ops.isa`). Deduction here only decides result types and rejects
what the instruction cannot do, at the user's span.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from pypto.dtype import DataType
from pypto.enums import PipeType, TileLayout, TilePad
from pypto.errors import PyptoTypeError, Span
from pypto.ir.expr import Call, ConstInt, Expr, as_expr, static_int
from pypto.ir.registry import create_op_call, register_op
from pypto.ir.type_rules import int_list, scalar, tensor, tile, vec_view
from pypto.ir.types import ScalarType, TensorType, TileType, shape_str
from pypto.ops.block import check_dtype
from pypto.ops.common import to_tuple

BLOCK = "BlockOp"
INDEX = DataType.INDEX

# tgather's mask patterns (pto-text-format §4.11): which columns c a pattern keeps, as (modulus, residue).
MASK_PATTERNS: dict[str, tuple[int, int]] = {
    "P0101": (2, 0), "P1010": (2, 1), "P0001": (4, 0), "P0010": (4, 1), "P0100": (4, 2), "P1000": (4, 3),
    "P1111": (1, 0),
}
# tsort32 writes 8-byte (value, u32 index) records: cells per record for each value width.
RECORD_BYTES = 8
SORT_BLOCK = 32


def _static_shape(op: str, t: TileType, span: Span) -> tuple[int, ...]:
    dims = tuple(static_int(d) for d in t.shape)
    if None in dims:
        raise PyptoTypeError(f"{op}: needs a tile of static shape, got {shape_str(t.shape)}", span)
    return dims


def _index(op: str, args: list, i: int, names: tuple, span: Span) -> None:
    t = scalar(op, args, i, names, span)
    if not (t.dtype.is_int() or t.dtype is INDEX):
        raise PyptoTypeError(f"{op}: '{names[i]}' must be an integer, got {t.dtype.name}", span)


# ----------------------------------------------------------------------------- element access


@register_op("block.getval", BLOCK, ("tile", "offset"), pipe=PipeType.S)
def _getval(args: list, kw: dict, span: Span) -> ScalarType:
    """One element of a tile at a row-major element offset, as a scalar of the tile's dtype."""
    t = tile("block.getval", args, 0, ("tile", "offset"), span)
    _index("block.getval", args, 1, ("tile", "offset"), span)
    check_dtype("block.getval", t.dtype, span)
    return ScalarType(t.dtype)


@register_op("block.setval", BLOCK, ("tile", "offset", "value"), pipe=PipeType.S)
def _setval(args: list, kw: dict, span: Span) -> TileType:
    """The tile with one element replaced; the result is the same buffer (an in-place write)."""
    names = ("tile", "offset", "value")
    t = tile("block.setval", args, 0, names, span)
    _index("block.setval", args, 1, names, span)
    v = scalar("block.setval", args, 2, names, span)
    check_dtype("block.setval", t.dtype, span)
    if v.dtype is not t.dtype:
        raise PyptoTypeError(f"write: the value is {v.dtype.name} but the tile is {t.dtype.name}; "
                             "convert it with pl.cast", span)
    return t


@register_op("block.read_gm", BLOCK, ("tensor", "offset"), pipe=PipeType.S)
def _read_gm(args: list, kw: dict, span: Span) -> ScalarType:
    """One element of a kernel's tensor parameter (a scalar GM read by the scalar unit)."""
    t = tensor("block.read_gm", args, 0, ("tensor", "offset"), span)
    _index("block.read_gm", args, 1, ("tensor", "offset"), span)
    return ScalarType(t.dtype)


@register_op("block.write_gm", BLOCK, ("value", "tensor", "offset"), pipe=PipeType.S)
def _write_gm(args: list, kw: dict, span: Span) -> TensorType:
    """A scalar GM write into a kernel's tensor; the result is that tensor (as for a store)."""
    names = ("value", "tensor", "offset")
    v = scalar("block.write_gm", args, 0, names, span)
    t = tensor("block.write_gm", args, 1, names, span)
    _index("block.write_gm", args, 2, names, span)
    if v.dtype is not t.dtype:
        raise PyptoTypeError(f"write: the value is {v.dtype.name} but the tensor is {t.dtype.name}; "
                             "convert it with pl.cast", span)
    return t


# ----------------------------------------------------------------------------- windows and joins


def _window_valid(src: TileType, offsets: tuple, shape: tuple, valid: tuple | None) -> tuple:
    """The window's valid region: the source's moved by ``offsets``, cut to the window and to ``valid``."""
    out = []
    for i, (n, o, sv) in enumerate(zip(shape, offsets, src.valid_shape, strict=True)):
        so, ssv = static_int(o), static_int(sv)
        v: Any = n
        if so is not None and ssv is not None:
            v = max(0, min(n, ssv - so))
        want = valid[i] if valid is not None else None
        if want is not None:
            sw = static_int(want)
            v = want if sw is None else (sw if not isinstance(v, int) else min(v, sw))
        out.append(v)
    return tuple(as_expr(v) if isinstance(v, int) else v for v in out)


@register_op("block.extract", BLOCK, ("tile", "row", "col", "shape", "valid_shape"), attrs={"pad": int},
             pipe=PipeType.V, min_args=4)
def _extract(args: list, kw: dict, span: Span) -> TileType:
    """``tile[row:row + R, col:col + C]`` copied into a new ``[R, C]`` tile (the window must lie inside)."""
    names = ("tile", "row", "col", "shape", "valid_shape")
    t = tile("block.extract", args, 0, names, span)
    _index("block.extract", args, 1, names, span)
    _index("block.extract", args, 2, names, span)
    check_dtype("block.extract", t.dtype, span)
    shape = int_list("block.extract", args[3], "shape", span, static=True)
    if len(t.shape) != 2 or len(shape) != 2:
        raise PyptoTypeError(f"tile.slice: needs a 2-D tile and a 2-D shape, got {shape_str(t.shape)} and "
                             f"{shape_str(shape)}", span)
    src = _static_shape("tile.slice", t, span)
    dims = tuple(static_int(d) for d in shape)
    for axis, (off, n, size) in enumerate(zip((args[1], args[2]), dims, src, strict=True)):
        so = static_int(off)
        if n > size or (so is not None and not 0 <= so <= size - n):
            where = f"[{so}, {so + n})" if so is not None else f"of extent {n}"
            raise PyptoTypeError(f"tile.slice: axis {axis}: window {where} is outside the tile's 0..{size}", span)
    valid = int_list("block.extract", args[4], "valid_shape", span) if len(args) > 4 else None
    vs = _window_valid(t, (args[1], args[2]), dims, valid)
    pad = TilePad(kw.get("pad", int(t.view.pad)))
    return TileType(shape, t.dtype, tile_view=vec_view(shape, vs, pad=pad))


@register_op("block.concat", BLOCK, ("lhs", "rhs"), pipe=PipeType.V)
def _concat(args: list, kw: dict, span: Span) -> TileType:
    """``[a | b]`` column-wise: same rows and dtype, ``cols = a.cols + b.cols``."""
    a, b = tile("block.concat", args, 0, ("lhs", "rhs"), span), tile("block.concat", args, 1, ("lhs", "rhs"), span)
    check_dtype("block.concat", a.dtype, span)
    if a.dtype is not b.dtype:
        raise PyptoTypeError(f"concat: dtypes differ ({a.dtype.name} vs {b.dtype.name})", span)
    sa, sb = _static_shape("concat", a, span), _static_shape("concat", b, span)
    if len(sa) != 2 or len(sb) != 2 or sa[0] != sb[0]:
        raise PyptoTypeError(f"concat: needs 2-D tiles with the same row count, got {shape_str(a.shape)} and "
                             f"{shape_str(b.shape)}", span)
    for t, dims in ((a, sa), (b, sb)):
        if [static_int(v) for v in t.valid_shape] != list(dims):
            raise PyptoTypeError("concat: operands must be wholly valid (fill the pad first with pl.fillpad)", span)
    shape = (as_expr(sa[0]), as_expr(sa[1] + sb[1]))
    return TileType(shape, a.dtype, tile_view=vec_view(shape))


@register_op("block.transpose_view", BLOCK, ("tile",))
def _transpose_view(args: list, kw: dict, span: Span) -> TileType:
    """The same bytes read as the transpose: rows/cols and both layouts flipped (zero copy).

    An NZ ``[N, K]`` Mat tile read this way is the ZN ``[K, N]`` tile, the layout of the cube's right
    operand; a row-major vector tile would become a column-major one, which vector ops do not take,
    so only boxed (cube-side) tiles are accepted.
    """
    t = tile("block.transpose_view", args, 0, ("tile",), span)
    if len(t.shape) != 2:
        raise PyptoTypeError(f"tile.transpose_view: needs a 2-D tile, got {shape_str(t.shape)}", span)
    view = t.view
    if view.slayout is TileLayout.none_box:
        raise PyptoTypeError("tile.transpose_view: the tile is a vector (Vec) tile; a transposed view is taken of "
                             "a cube-side tile (load it with target_memory=pl.Mem.Mat), or transpose a vector "
                             "tile with pl.transpose(t, 0, 1)", span)
    flip = {TileLayout.row_major: TileLayout.col_major, TileLayout.col_major: TileLayout.row_major,
            TileLayout.none_box: TileLayout.none_box}
    vs = tuple(t.valid_shape)
    tview = replace(view, valid_shape=(vs[1], vs[0]), blayout=flip[view.blayout], slayout=flip[view.slayout])
    return TileType((t.shape[1], t.shape[0]), t.dtype, tile_view=tview)


@register_op("block.set_validshape", BLOCK, ("tile", "valid_rows", "valid_cols"))
def _set_validshape(args: list, kw: dict, span: Span) -> TileType:
    """The same buffer with another valid region (metadata only: no data moves)."""
    names = ("tile", "valid_rows", "valid_cols")
    t = tile("block.set_validshape", args, 0, names, span)
    if len(t.shape) != 2:
        raise PyptoTypeError(f"set_validshape: needs a 2-D tile, got {shape_str(t.shape)}", span)
    for i, axis in ((1, 0), (2, 1)):
        _index("block.set_validshape", args, i, names, span)
        v, n = static_int(args[i]), static_int(t.shape[axis])
        if v is not None and n is not None and not 0 < v <= n:
            raise PyptoTypeError(f"set_validshape: {names[i]} = {v} must be in [1, {n}]", span)
    return TileType(t.shape, t.dtype, tile_view=replace(t.view, valid_shape=(args[1], args[2])))


# ----------------------------------------------------------------------------- sort and top-k


def _records_dtype(op: str, t: TileType, span: Span) -> int:
    if t.dtype not in (DataType.FP32, DataType.FP16):
        raise PyptoTypeError(f"{op}: sorts FP32 or FP16 values, got {t.dtype.name}", span)
    return RECORD_BYTES // t.dtype.nbytes


@register_op("block.sort32", BLOCK, ("tile", "idx"), pipe=PipeType.V)
def _sort32(args: list, kw: dict, span: Span) -> TileType:
    """Per row and 32-element block, (value, index) records sorted by value descending (tsort32)."""
    src, idx = tile("block.sort32", args, 0, ("tile", "idx"), span), tile("block.sort32", args, 1, ("tile", "idx"), span)
    cells = _records_dtype("sort32", src, span)
    if idx.dtype not in (DataType.UINT32, DataType.INT32):
        raise PyptoTypeError(f"sort32: the index tile must be UINT32 (pl.arange(0, [1, N], dtype=pl.UINT32)), got "
                             f"{idx.dtype.name}", span)
    rows, cols = _static_shape("sort32", src, span)
    irows, icols = _static_shape("sort32", idx, span)
    if cols % SORT_BLOCK:
        raise PyptoTypeError(f"sort32: the row length must be a multiple of {SORT_BLOCK}, got {cols}", span)
    if irows not in (1, rows) or icols < cols:
        raise PyptoTypeError(f"sort32: the index tile must be [1, {cols}] or [{rows}, {cols}], got "
                             f"{shape_str(idx.shape)}", span)
    shape = (as_expr(rows), as_expr(cols * cells))
    return TileType(shape, src.dtype, tile_view=vec_view(shape))


@register_op("block.mrgsort", BLOCK, ("tile", "block_len"), pipe=PipeType.V)
def _mrgsort(args: list, kw: dict, span: Span) -> TileType:
    """tmrgsort format 1: each row holds 4 sorted runs of ``block_len`` cells, merged into one."""
    t = tile("block.mrgsort", args, 0, ("tile", "block_len"), span)
    _records_dtype("mrgsort", t, span)
    _, cols = _static_shape("mrgsort", t, span)
    n = static_int(args[1])
    if n is None or n <= 0 or n % 64:
        raise PyptoTypeError(f"mrgsort: block_len must be a positive multiple of 64, got {n}", span)
    if cols != 4 * n:
        raise PyptoTypeError(f"mrgsort: a row of {cols} cells is not 4 runs of block_len={n}", span)
    return TileType(t.shape, t.dtype, tile_view=vec_view(t.shape))


@register_op("block.mrgsort_lists", BLOCK, ("s0", "s1", "s2", "s3", "tmp"), attrs={"exhausted": bool}, pipe=PipeType.V,
             min_args=3)
def _mrgsort_lists(args: list, kw: dict, span: Span) -> TileType:
    """tmrgsort format 2: 2-4 one-row lists of sorted records merged into one row (their cells in
    total); the last argument is the scratch tile, as the instruction takes it."""
    lists, tmp = args[:-1], args[-1]
    if not 2 <= len(lists) <= 4:
        raise PyptoTypeError(f"mrgsort: format 2 merges 2 to 4 lists, got {len(lists)}", span)
    first = tile("block.mrgsort_lists", lists, 0, ("s0",), span)
    cells = _records_dtype("mrgsort", first, span)
    total = 0
    for i in range(len(lists)):
        t = tile("block.mrgsort_lists", lists, i, ("s0", "s1", "s2", "s3"), span)
        rows, cols = _static_shape("mrgsort", t, span)
        if t.dtype is not first.dtype or rows != 1 or cols % cells:
            raise PyptoTypeError(f"mrgsort: list {i} must be a [1, n] {first.dtype.name} row of whole records "
                                 f"({cells} cells each), got {shape_str(t.shape)} {t.dtype.name}", span)
        total += cols
    scratch = tile("block.mrgsort_lists", [tmp], 0, ("tmp",), span)
    if _static_shape("mrgsort", scratch, span)[1] < total:
        raise PyptoTypeError(f"mrgsort: the scratch tile needs {total} columns", span)
    shape = (as_expr(1), as_expr(total))
    return TileType(shape, first.dtype, tile_view=vec_view(shape))


# The counts of the compare form land in column 0 of a one-row-per-source-row INT32 tile; a UB row
# holds at least 32 bytes, so the tile is 8 columns wide with one valid column.
COUNT_COLS = 8


@register_op("block.gather_cmp", BLOCK, ("tile", "kvalue", "other"),
             attrs={"part": str, "cmp_mode": str, "offset": int, "out_cols": int}, pipe=PipeType.V)
def _gather_cmp(args: list, kw: dict, span: Span) -> TileType:
    """``tgather`` compare form: per row, the column indices (+ ``offset``) of the elements that
    compare ``cmp_mode`` (eq, gt) with ``kvalue``, packed to the left, and their count. The one
    instruction writes both; ``part`` names the one this call's result is, ``other`` is the tile
    that receives the other (each result is one call, so each is an ordinary single-result op)."""
    names = ("tile", "kvalue", "other")
    t = tile("block.gather_cmp", args, 0, names, span)
    scalar("block.gather_cmp", args, 1, names, span)
    tile("block.gather_cmp", args, 2, names, span)
    check_dtype("block.gather_cmp", t.dtype, span)
    rows, cols = _static_shape("gather", t, span)
    if kw.get("cmp_mode", "eq") not in ("eq", "gt"):
        raise PyptoTypeError(f"gather: cmp_mode must be 'eq' or 'gt', got {kw.get('cmp_mode')!r}", span)
    if kw.get("part") == "indices":
        shape = (as_expr(rows), as_expr(kw.get("out_cols", cols)))
        return TileType(shape, DataType.INT32, tile_view=vec_view(shape))
    if kw.get("part") != "counts":
        raise PyptoTypeError("gather: part must be 'indices' or 'counts'", span)
    shape = (as_expr(rows), as_expr(COUNT_COLS))
    return TileType(shape, DataType.INT32, tile_view=vec_view(shape, (as_expr(rows), as_expr(1))))


@register_op("block.gather_mask", BLOCK, ("tile",), attrs={"pattern": str, "output_dtype": DataType},
             pipe=PipeType.V)
def _gather_mask(args: list, kw: dict, span: Span) -> TileType:
    """The columns a mask pattern keeps, packed row by row; ``output_dtype`` reinterprets the bits."""
    t = tile("block.gather_mask", args, 0, ("tile",), span)
    check_dtype("block.gather_mask", t.dtype, span)
    pattern = kw.get("pattern", "")
    if pattern not in MASK_PATTERNS:
        raise PyptoTypeError(f"gather: unknown mask pattern {pattern!r} (one of {', '.join(MASK_PATTERNS)})", span)
    rows, cols = _static_shape("gather", t, span)
    mod, _ = MASK_PATTERNS[pattern]
    if cols % mod:
        raise PyptoTypeError(f"gather: {cols} columns are not a multiple of the pattern's period {mod}", span)
    out = kw.get("output_dtype", t.dtype)
    if out.nbytes != t.dtype.nbytes:
        raise PyptoTypeError(f"gather: output_dtype {out.name} must have the width of {t.dtype.name}", span)
    shape = (as_expr(rows), as_expr(cols // mod))
    return TileType(shape, out, tile_view=vec_view(shape))


@register_op("block.gather_index", BLOCK, ("tile", "idx"), pipe=PipeType.V)
def _gather_index(args: list, kw: dict, span: Span) -> TileType:
    """``d[i, j] = src.flat[idx[i, j]]`` (row-major over the whole source tile; out of range gives 0)."""
    src, idx = tile("block.gather_index", args, 0, ("tile", "idx"), span), tile("block.gather_index", args, 1,
                                                                                ("tile", "idx"), span)
    check_dtype("block.gather_index", src.dtype, span)
    if idx.dtype is not DataType.INT32:
        raise PyptoTypeError(f"gather: the index tile must be INT32, got {idx.dtype.name}", span)
    return TileType(idx.shape, src.dtype, tile_view=vec_view(idx.shape, idx.valid_shape))


def _fillpad_pad(op: str, kw: dict, span: Span) -> TilePad:
    pad = TilePad(kw.get("pad", int(TilePad.zero)))
    if pad is TilePad.null:
        raise PyptoTypeError(f"{op}: the pad value must be zero, max or min", span)
    return pad


@register_op("block.fillpad_expand", BLOCK, ("tile", "shape"), attrs={"pad": int}, pipe=PipeType.V)
def _fillpad_expand(args: list, kw: dict, span: Span) -> TileType:
    """The valid region copied into the top-left of a larger ``shape``, the rest set to the pad value."""
    t = tile("block.fillpad_expand", args, 0, ("tile", "shape"), span)
    check_dtype("block.fillpad_expand", t.dtype, span)
    shape = int_list("block.fillpad_expand", args[1], "shape", span, static=True)
    src = _static_shape("fillpad_expand", t, span)
    if len(shape) != 2 or any(static_int(n) < s for n, s in zip(shape, src, strict=True)):
        raise PyptoTypeError(f"fillpad_expand: the shape {shape_str(shape)} must be 2-D and at least the tile's "
                             f"{shape_str(t.shape)}", span)
    return TileType(shape, t.dtype, tile_view=vec_view(shape, pad=_fillpad_pad("fillpad_expand", kw, span)))


@register_op("block.fillpad_inplace", BLOCK, ("tile",), attrs={"pad": int}, pipe=PipeType.V)
def _fillpad_inplace(args: list, kw: dict, span: Span) -> TileType:
    """The same buffer, wholly valid: elements outside the old valid region set to the pad value."""
    t = tile("block.fillpad_inplace", args, 0, ("tile",), span)
    check_dtype("block.fillpad_inplace", t.dtype, span)
    return TileType(t.shape, t.dtype, tile_view=vec_view(t.shape, pad=_fillpad_pad("fillpad_inplace", kw, span)))


@register_op("block.arange", BLOCK, ("start", "shape"), attrs={"dtype": DataType, "descending": bool},
             pipe=PipeType.V)
def _arange(args: list, kw: dict, span: Span) -> TileType:
    """A ``[1, N]`` row ``start, start + 1, ...`` (or counting down) of an integer dtype (tci)."""
    _index("block.arange", args, 0, ("start", "shape"), span)
    shape = int_list("block.arange", args[1], "shape", span, static=True)
    if len(shape) != 2 or static_int(shape[0]) != 1:
        raise PyptoTypeError(f"arange: the shape must be [1, N], got {shape_str(shape)}", span)
    dtype = kw.get("dtype", DataType.INT32)
    check_dtype("block.arange", dtype, span)
    return TileType(shape, dtype, tile_view=vec_view(shape))


# ----------------------------------------------------------------------------- builder functions


def _int(v: Any, span: Span | None, dtype: DataType = INDEX) -> Expr:
    e = as_expr(v, span)
    if isinstance(e, ConstInt) and e.dtype is not dtype:
        return ConstInt(int(e.value), dtype, e.span)
    return e


def getval(tile: Expr, offset: Any, span: Span | None = None) -> Call:
    return create_op_call("block.getval", [tile, _int(offset, span)], {}, span)


def setval(tile: Expr, offset: Any, value: Any, span: Span | None = None) -> Call:
    return create_op_call("block.setval", [tile, _int(offset, span), value], {}, span)


def read_gm(tensor: Expr, offset: Any, span: Span | None = None) -> Call:
    return create_op_call("block.read_gm", [tensor, _int(offset, span)], {}, span)


def write_gm(value: Expr, tensor: Expr, offset: Any, span: Span | None = None) -> Call:
    return create_op_call("block.write_gm", [value, tensor, _int(offset, span)], {}, span)


def extract(tile: Expr, row: Any, col: Any, shape: Any, valid_shape: Any = None, pad: TilePad | None = None,
            span: Span | None = None) -> Call:
    args = [tile, _int(row, span), _int(col, span), to_tuple(shape, span, "shape")]
    if valid_shape is not None:
        args.append(to_tuple(valid_shape, span, "valid_shape"))
    return create_op_call("block.extract", args, {} if pad is None else {"pad": int(pad)}, span)


def set_validshape(tile: Expr, valid_rows: Any, valid_cols: Any, span: Span | None = None) -> Call:
    return create_op_call("block.set_validshape", [tile, _int(valid_rows, span), _int(valid_cols, span)], {}, span)


def concat(lhs: Expr, rhs: Expr, span: Span | None = None) -> Call:
    return create_op_call("block.concat", [lhs, rhs], {}, span)


def transpose_view(tile: Expr, span: Span | None = None) -> Call:
    return create_op_call("block.transpose_view", [tile], {}, span)


def sort32(tile: Expr, idx: Expr, span: Span | None = None) -> Call:
    return create_op_call("block.sort32", [tile, idx], {}, span)


def mrgsort(tile: Expr, block_len: Any, span: Span | None = None) -> Call:
    return create_op_call("block.mrgsort", [tile, _int(block_len, span, DataType.INT32)], {}, span)


def mrgsort_lists(lists: list, tmp: Expr, exhausted: bool = False, span: Span | None = None) -> Call:
    """``exhausted=True``: the merge stops when the first list runs out (tmrgsort ``{exhausted = true}``)."""
    return create_op_call("block.mrgsort_lists", [*lists, tmp], {"exhausted": True} if exhausted else {}, span)


def gather_cmp(tile: Expr, kvalue: Expr, other: Expr, part: str, cmp_mode: str = "eq", offset: int = 0,
               out_cols: int | None = None, span: Span | None = None) -> Call:
    kw: dict = {"part": part, "cmp_mode": cmp_mode, "offset": int(offset)}
    if out_cols is not None:
        kw["out_cols"] = int(out_cols)
    return create_op_call("block.gather_cmp", [tile, kvalue, other], kw, span)


def gather_mask(tile: Expr, pattern: str, output_dtype: DataType | None = None, span: Span | None = None) -> Call:
    kw: dict = {"pattern": pattern}
    if output_dtype is not None:
        kw["output_dtype"] = output_dtype
    return create_op_call("block.gather_mask", [tile], kw, span)


def gather_index(tile: Expr, idx: Expr, span: Span | None = None) -> Call:
    return create_op_call("block.gather_index", [tile, idx], {}, span)


def fillpad_expand(tile: Expr, shape: Any, pad: TilePad, span: Span | None = None) -> Call:
    return create_op_call("block.fillpad_expand", [tile, to_tuple(shape, span, "shape")], {"pad": int(pad)}, span)


def fillpad_inplace(tile: Expr, pad: TilePad, span: Span | None = None) -> Call:
    return create_op_call("block.fillpad_inplace", [tile], {"pad": int(pad)}, span)


def arange(start: Any, shape: Any, dtype: DataType = DataType.INT32, descending: bool = False,
           span: Span | None = None) -> Call:
    start_dtype = DataType.INT32 if dtype.nbytes == 4 else DataType.INT16
    return create_op_call("block.arange", [_int(start, span, start_dtype), to_tuple(shape, span, "shape")],
                          {"dtype": dtype, "descending": bool(descending)}, span)
