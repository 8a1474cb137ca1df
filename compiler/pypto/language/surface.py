"""The jit-era language surface beyond slicing (spec pypto-jit §6.2-§8): element access, tile windows,
joins, transposed views, valid shapes and pads, sort and top-k.

``pl.<op>``, ``pl.tile.<op>`` and ``pl.tensor.<op>`` calls whose name is in :data:`OPS` come here from
the parser's call dispatch. Each handler reads the spec's keyword names, decides by where it is written
(orchestration or InCore) and by its operand (tensor or tile), and builds the ops of
:mod:`pypto.ops.tile_data` (or the existing load/fillpad/reshape/read ops). What the emulator cannot do
is refused by name at the user's line.
"""

from __future__ import annotations

import ast
import enum
import math
from typing import Any

from pypto.dtype import DataType
from pypto.enums import MemorySpace, TilePad
from pypto.errors import PyptoTypeError, as_written
from pypto.ir import expr as E
from pypto.ir import stmt as St
from pypto.ir.types import ScalarType, TensorType, TileType, static_int
from pypto.language import lanes, optimizations, slicing, tasks
from pypto.lib import ops as LIB
from pypto.ops import block as B
from pypto.ops import tensor as T
from pypto.ops import tile_data as D
from pypto.ops.common import scalar_arg

PadValue = TilePad


class MaskPattern(enum.IntEnum):
    """``pl.tile.MaskPattern``: which columns a mask gather keeps (spec §8)."""

    P0101 = 1
    P1010 = 2
    P0001 = 3
    P0010 = 4
    P0100 = 5
    P1000 = 6
    P1111 = 7


def _kind(v: Any) -> str:
    t = getattr(v, "type", None)
    return "tile" if isinstance(t, TileType) else "tensor" if isinstance(t, TensorType) else "other"


def _bind_args(p: Any, node: ast.Call, what: str, names: tuple, args: list, kwargs: dict, required: int) -> list:
    """Positional and keyword arguments in ``names`` order (None for missing optional ones)."""
    if len(args) > len(names):
        raise p.error(f"{what} takes at most {len(names)} arguments ({', '.join(names)}), got {len(args)}", node,
                      PyptoTypeError)
    out = list(args) + [None] * (len(names) - len(args))
    for k, v in kwargs.items():
        if k not in names:
            raise p.error(f"{what} got an unexpected keyword argument '{k}'", node, PyptoTypeError)
        i = names.index(k)
        if i < len(args):
            raise p.error(f"{what} got multiple values for argument '{k}'", node, PyptoTypeError)
        out[i] = v
    missing = [n for n, v in zip(names[:required], out[:required], strict=True) if v is None]
    if missing:
        raise p.error(f"{what} is missing argument '{missing[0]}'", node, PyptoTypeError)
    return out


def _static_dims(p: Any, node: ast.AST, t: Any, what: str) -> list[int]:
    dims = [static_int(d) for d in t.type.shape]
    if None in dims:
        raise p.error(f"{what}: needs a static shape, got a dynamic one", node)
    return dims


def _flat_offset(p: Any, node: ast.AST, x: Any, offset: Any, what: str) -> Any:
    """The row-major element offset of ``offset`` (one index per dim, or one flat integer) in ``x``."""
    dims = _static_dims(p, node, x, what)
    if not isinstance(offset, (list, tuple)):
        return offset
    if len(offset) != len(dims):
        raise p.error(f"{what}: {len(offset)} indices for a rank-{len(dims)} value", node, PyptoTypeError)
    flat: Any = 0
    for i, (idx, d) in enumerate(zip(offset, dims, strict=True)):
        s = static_int(idx) if isinstance(idx, E.Expr) else idx if isinstance(idx, int) else None
        if s is not None and not 0 <= s < d:
            raise p.error(f"{what}: index {s} is outside axis {i} of extent {d}", node)
        flat = flat * d + idx if i else idx
    return flat


def _indices(p: Any, node: ast.AST, x: Any, offset: Any, what: str) -> list:
    """One index per dim of ``x``: a flat integer offset is unravelled row-major."""
    if isinstance(offset, (list, tuple)):
        if len(offset) != len(x.type.shape):
            raise p.error(f"{what}: {len(offset)} indices for a rank-{len(x.type.shape)} tensor", node, PyptoTypeError)
        return list(offset)
    dims = _static_dims(p, node, x, what)
    out, stride = [], 1
    for d in reversed(dims):
        out.insert(0, (offset // stride) % d if len(dims) > 1 else offset)
        stride *= d
    return out


def _element(p: Any, node: ast.AST, value: Any, dtype: DataType) -> Any:
    """A written scalar: literals take the destination's dtype, expressions must already have it."""
    v = scalar_arg(value, dtype, p.span(node))
    if not isinstance(getattr(v, "type", None), ScalarType):
        raise p.error("pl.write: the value must be a scalar", node, PyptoTypeError)
    return v


# ----------------------------------------------------------------------------- element access


def read(p: Any, node: ast.Call, args: list, kwargs: dict) -> Any:
    src, offset = _bind_args(p, node, "pl.read", ("src", "offset"), args, kwargs, 2)
    span = p.span(node)
    if _kind(src) == "tile":
        return D.getval(src, _flat_offset(p, node, src, offset, "pl.read"), span=span)
    if _kind(src) != "tensor":
        raise p.error("pl.read reads an element of a tensor or a tile", node, PyptoTypeError)
    if p.in_incore:
        return D.read_gm(src, _flat_offset(p, node, src, offset, "pl.read"), span=span)
    return T.read(src, _indices(p, node, src, offset, "pl.read"), span=span)


def write(p: Any, node: ast.Call, args: list, kwargs: dict) -> None:
    """``pl.write(dst, offset, value)``: a statement; a tile or InCore tensor target is rebound to the
    written value (the same buffer), so later uses are ordered after the write."""
    dst, offset, value = _bind_args(p, node, "pl.write", ("dst", "offset", "value"), args, kwargs, 3)
    span = p.span(node)
    kind = _kind(dst)
    if kind == "other":
        raise p.error("pl.write writes an element of a tensor or a tile", node, PyptoTypeError)
    v = _element(p, node, value, dst.type.dtype)
    if kind == "tensor" and not p.in_incore:
        p.emit(St.EvalStmt(T.write(dst, _indices(p, node, dst, offset, "pl.write"), v, span=span), span))
        return
    target = node.args[0] if node.args else next(k.value for k in node.keywords if k.arg == "dst")
    if not isinstance(target, ast.Name):
        raise p.error("pl.write: the destination must be a name (it is rebound to the written value)", target)
    flat = _flat_offset(p, node, dst, offset, "pl.write")
    call = D.setval(dst, flat, v, span=span) if kind == "tile" else D.write_gm(v, dst, flat, span=span)
    p.bind(target.id, call, node)
    return


# ----------------------------------------------------------------------------- windows, joins, views


def _pad(p: Any, node: ast.AST, value: Any) -> TilePad | None:
    """``pad_value``: a ``pl.PadValue``, or 0 / math.inf / -math.inf (spec §7)."""
    if value is None or isinstance(value, TilePad):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if value == 0:
            return TilePad.zero
        if value == math.inf:
            return TilePad.max
        if value == -math.inf:
            return TilePad.min
    raise p.error(f"pad_value must be a pl.PadValue, 0, math.inf or -math.inf, got {value!r}", node, PyptoTypeError)


def tile_slice(p: Any, node: ast.Call, args: list, kwargs: dict) -> Any:
    """``pl.tile.slice(tile, shape, offset, valid_shape=None, drop_dims=None, pad_value=None)``."""
    names = ("tile", "shape", "offset", "valid_shape", "drop_dims", "pad_value")
    t, shape, offset, valid, drop, pad = _bind_args(p, node, "pl.tile.slice", names, args, kwargs, 3)
    if _kind(t) != "tile":
        raise p.error("pl.tile.slice takes a tile (slice a tensor with pl.slice or a subscript)", node, PyptoTypeError)
    if drop:
        raise p.error("pl.tile.slice(drop_dims=...) is not supported (tiles stay 2-D)", node)
    if len(shape) != 2 or len(offset) != 2:
        raise p.error("pl.tile.slice: shape and offset need one entry per axis of a 2-D tile", node, PyptoTypeError)
    return D.extract(t, offset[0], offset[1], shape, valid, _pad(p, node, pad), span=p.span(node))


def tile_window(p: Any, node: ast.Subscript, t: E.Expr) -> E.Expr:
    """``t[a:b, c:d]`` of a tile (spec pypto-jit §6.1: subscripts on tiles follow NumPy rules): the
    window ``pl.tile.slice(t, [b - a, d - c], [a, c])`` takes, with constant extents; a scalar index keeps
    its axis as a unit one (tiles stay 2-D)."""
    if len(t.type.shape) != 2:
        raise p.error(f"a subscript of a tile needs a 2-D tile, this one is {len(t.type.shape)}-D", node, PyptoTypeError)
    offsets, shapes = slicing.window(p, t, node.slice)
    return D.extract(t, offsets[0], offsets[1], shapes, None, None, span=p.span(node))


def tensor_slice(p: Any, node: ast.Call, args: list, kwargs: dict) -> Any:
    """``pl.slice(tensor, shape, offset, valid_shape=, pad_value=, clamp=)`` in InCore code: a window load."""
    names = ("x", "shape", "offset", "valid_shape", "drop_dims", "pad_value", "clamp")
    x, shape, offset, valid, drop, pad, clamp = _bind_args(p, node, "pl.slice", names, args, kwargs, 3)
    if not p.in_incore:
        if clamp or drop:
            raise p.error("pl.slice(clamp=/drop_dims=) of a tensor view in orchestration is not supported by the "
                          "emulator; give them where the window is loaded", node)
        view = T.view(x, list(shape), list(offset), span=p.span(node))
        if valid is None and pad is None:
            return view
        return _view_with_valid_shape(p, node, view, list(shape), valid, _pad(p, node, pad))
    if drop:
        raise p.error("pl.slice(drop_dims=...) is not supported (tiles stay 2-D)", node)
    dims = [static_int(d) if isinstance(d, E.Expr) else d for d in shape]
    if any(not isinstance(d, int) or isinstance(d, bool) or d <= 0 for d in dims):
        raise p.error("pl.slice: a tile window needs positive constant shape entries", node)
    return load_window(p, node, x, list(offset), dims, valid, clamp, _pad(p, node, pad), None, "pl.slice")


def _view_with_valid_shape(p: Any, node: ast.Call, view: E.Call, shape: list, valid: Any,
                           pad: TilePad | None) -> E.Var:
    """An orchestration view with a valid region (spec pypto-jit §6.2): the view's window is bound to a
    temporary whose valid shape and pad the parser keeps; InCore loads of it (``pl.load``, ``pl.slice``,
    subscripts) read only the valid part and fill the rest with the pad. Its parent's valid region
    cuts it too (a slice narrows, never widens)."""
    vs = list(valid) if valid is not None else list(shape)
    if len(vs) != len(shape):
        raise p.error(f"valid_shape has {len(vs)} entries for a {len(shape)}-D window", node, PyptoTypeError)
    for i, (v, n) in enumerate(zip(vs, shape, strict=True)):
        sv, sn = _static(v), _static(n)
        if sv is not None and sn is not None and not 0 < sv <= sn:
            raise p.error(f"valid_shape[{i}] = {sv} must be in [1, {sn}]: a valid shape narrows the window, it "
                          "never widens it", node, PyptoTypeError)
    parent = p.view_valid.get(view.args[0])
    if parent is not None:
        offsets = view.args[2] if isinstance(view.args[2], (list, tuple)) else getattr(view.args[2], "elements", ())
        vs = [_cut(p, node, v, pv, o) for v, pv, o in zip(vs, parent[0], offsets, strict=False)]
        pad = pad if pad is not None else parent[1]
    var = p.temp(view, node)
    p.view_valid[var] = (vs, pad)
    return var


def _cut(p: Any, node: ast.AST, valid: Any, parent_valid: Any, offset: Any) -> Any:
    """``min(valid, parent_valid - offset)``, at least 0: a window's valid extent inside a valid region."""
    sv, sp, so = _static(valid), _static(parent_valid), _static(offset)
    if None not in (sv, sp, so):
        return max(0, min(sv, sp - so))
    return E.min_(p.to_ir(valid, node), E.max_(p.to_ir(parent_valid, node) - p.to_ir(offset, node), 0))


def _static(v: Any) -> int | None:
    if isinstance(v, bool):
        return None
    return v if isinstance(v, int) else static_int(v) if isinstance(v, E.Expr) else None


def load_window(p: Any, node: ast.AST, x: Any, offset: list, shape: list, valid: Any, clamp: Any,
                pad: TilePad | None, memory: Any, spelled: str = "pl.load") -> Any:
    """A tile load of ``x[offset : offset + shape]`` with the spec's valid-shape rules (§7): ``valid``
    narrows the window (never widens it); ``clamp`` cuts it at the tensor's end instead of refusing.
    ``spelled``: what the user wrote (``pl.load``, ``pl.slice``, a subscript), the name its errors use."""
    vs = list(valid) if valid is not None else list(shape)
    if len(vs) != len(shape):
        raise p.error(f"valid_shape has {len(vs)} entries for a {len(shape)}-D window", node, PyptoTypeError)
    for i, (v, n) in enumerate(zip(vs, shape, strict=True)):
        sv = _static(v)
        if sv is not None and not 0 < sv <= n:
            raise p.error(f"valid_shape[{i}] = {sv} must be in [1, {n}]: a valid shape narrows the window, it "
                          "never widens it", node, PyptoTypeError)
    view = p.view_valid.get(x)
    if view is not None:  # a window of an orchestration view with a valid region: cut to it
        vs = [_cut(p, node, v, pv, o) for v, pv, o in zip(vs, view[0], offset, strict=True)]
        pad = pad if pad is not None else view[1]
        valid = vs
    if clamp:
        for i, (o, d) in enumerate(zip(offset, x.type.shape, strict=True)):
            so, sd, sv = _static(o), static_int(d), _static(vs[i])
            if so is not None and sd is not None:
                if so >= sd:
                    raise p.error(f"pl.slice(clamp=True): axis {i} starts at {so}, at or past its end ({sd})", node)
                vs[i] = min(sv, sd - so) if sv is not None else E.min_(p.to_ir(vs[i], node), sd - so)
            else:
                vs[i] = E.min_(p.to_ir(vs[i], node), p.to_ir(d, node) - p.to_ir(o, node))
    narrowed = valid is not None or bool(clamp)
    try:
        return B.load(x, offset, shape, vs if narrowed else None, memory, pad=pad, span=p.span(node))
    except PyptoTypeError as e:
        raise as_written(e, "block.load", spelled) from None


def load(p: Any, node: ast.Call, args: list, kwargs: dict) -> Any:
    """``pl.load(tensor, offsets, shapes, valid_shape=None, target_memory=Vec, clamp=False)``."""
    names = ("tensor", "offsets", "shapes", "valid_shape", "target_memory", "clamp", "valid_shapes")
    x, offsets, shapes, valid, memory, clamp, valid_old = _bind_args(p, node, "pl.load", names, args, kwargs, 3)
    if isinstance(valid, MemorySpace):  # pl.load(t, offsets, shapes, pl.Mem.Mat)
        valid, memory = memory, valid
    if not isinstance(offsets, (list, tuple)) or not isinstance(shapes, (list, tuple)):
        raise p.error("pl.load(tensor, offsets, shapes): offsets and shapes are lists", node, PyptoTypeError)
    return load_window(p, node, x, list(offsets), list(shapes), valid if valid is not None else valid_old, clamp,
                       None, memory)


def fillpad(p: Any, node: ast.Call, args: list, kwargs: dict) -> Any:
    """``pl.fillpad(tile, pad_value=PadValue.zero)`` (``pad=`` is the older spelling)."""
    t, pad_value, pad = _bind_args(p, node, "pl.fillpad", ("tile", "pad_value", "pad"), args, kwargs, 1)
    value = pad_value if pad_value is not None else pad
    if isinstance(value, str):
        return B.fillpad(t, value, span=p.span(node))
    chosen = _pad(p, node, value) if value is not None else TilePad.zero
    if chosen is TilePad.null:
        raise p.error("pl.fillpad: PadValue.null defines nothing; use zero, max or min", node, PyptoTypeError)
    return B.fillpad(t, chosen, span=p.span(node))


def set_validshape(p: Any, node: ast.Call, args: list, kwargs: dict) -> Any:
    """``pl.set_validshape(tile, valid_rows, valid_cols)``: the tile's name is rebound to the same buffer
    with the new valid region, so it works as a statement and as an expression."""
    names = ("x", "valid_rows", "valid_cols")
    x, rows, cols = _bind_args(p, node, "pl.set_validshape", names, args, kwargs, 3)
    if _kind(x) != "tile":
        raise p.error("pl.set_validshape on a tensor is not supported by the emulator (give the load or slice "
                      "valid_shape= instead)", node)
    call = D.set_validshape(x, rows, cols, span=p.span(node))
    target = node.args[0] if node.args else None
    if isinstance(target, ast.Name):
        return p.bind(target.id, call, node)
    return call


def fillpad_expand(p: Any, node: ast.Call, args: list, kwargs: dict) -> Any:
    """``pl.fillpad_expand(tile, shape, pad_value)``: the valid region in the top-left of a larger tile."""
    t, shape, pad = _bind_args(p, node, "pl.fillpad_expand", ("tile", "shape", "pad_value"), args, kwargs, 2)
    chosen = _pad(p, node, pad) if pad is not None else TilePad.zero
    if chosen is TilePad.null:
        raise p.error("pl.fillpad_expand: PadValue.null defines nothing; use zero, max or min", node, PyptoTypeError)
    return D.fillpad_expand(t, shape, chosen, span=p.span(node))


def fillpad_inplace(p: Any, node: ast.Call, args: list, kwargs: dict) -> Any:
    """``pl.tile.fillpad_inplace(tile, pad_value)``: fills the pad of the same buffer; the name is rebound."""
    t, pad = _bind_args(p, node, "pl.tile.fillpad_inplace", ("tile", "pad_value"), args, kwargs, 1)
    chosen = _pad(p, node, pad) if pad is not None else TilePad.zero
    if chosen is TilePad.null:
        raise p.error("pl.tile.fillpad_inplace: PadValue.null defines nothing; use zero, max or min", node,
                      PyptoTypeError)
    call = D.fillpad_inplace(t, chosen, span=p.span(node))
    target = node.args[0] if node.args else None
    return p.bind(target.id, call, node) if isinstance(target, ast.Name) else call


def concat(p: Any, node: ast.Call, args: list, kwargs: dict) -> Any:
    if args and _kind(args[0]) == "tensor":  # tensors: the library's concat along any axis (pypto.lib)
        try:
            return LIB.concat(*args, **kwargs, span=p.span(node))
        except TypeError as e:
            raise p.error(f"pl.concat: {e}", node, PyptoTypeError) from None
    a, b = _bind_args(p, node, "pl.concat", ("a", "b"), args, kwargs, 2)
    if _kind(a) != "tile" or _kind(b) != "tile":
        raise p.error("pl.concat joins two tiles (load tensor windows first in InCore code)", node, PyptoTypeError)
    return D.concat(a, b, span=p.span(node))


def transpose_view(p: Any, node: ast.Call, args: list, kwargs: dict) -> Any:
    (t,) = _bind_args(p, node, "pl.tile.transpose_view", ("tile",), args, kwargs, 1)
    if _kind(t) != "tile":
        raise p.error("pl.tile.transpose_view takes a tile", node, PyptoTypeError)
    return D.transpose_view(t, span=p.span(node))


# ----------------------------------------------------------------------------- sort and top-k


def sort32(p: Any, node: ast.Call, args: list, kwargs: dict) -> Any:
    src, idx = _bind_args(p, node, "pl.sort32", ("src", "idx"), args, kwargs, 2)
    return D.sort32(src, idx, span=p.span(node))


def mrgsort(p: Any, node: ast.Call, args: list, kwargs: dict) -> Any:
    """Format 1, ``pl.mrgsort(s, block_len=L)``: every group of 4 sorted runs of L cells becomes one run.

    One ``tmrgsort`` merges the 4 runs of a row that is exactly 4L cells; a longer ``[1, N]`` row is
    viewed as ``[N / 4L, 4L]`` (the same bytes), merged row by row, and viewed back.
    """
    if len(args) > 1 or "exhausted" in kwargs:
        return _merge_lists(p, node, args, kwargs)
    (s, block_len) = _bind_args(p, node, "pl.mrgsort", ("s", "block_len"), args, kwargs, 2)
    if _kind(s) != "tile":
        raise p.error("pl.mrgsort takes a tile of sorted records", node, PyptoTypeError)
    rows, cols = _static_dims(p, node, s, "pl.mrgsort")
    span = p.span(node)
    if not isinstance(block_len, int) or block_len <= 0 or block_len % 64:
        raise p.error(f"pl.mrgsort: block_len must be a positive multiple of 64, got {block_len!r}", node)
    group = 4 * block_len
    if cols == group:
        return D.mrgsort(s, block_len, span=span)
    if rows != 1 or cols % group:
        raise p.error(f"pl.mrgsort: a [{rows}, {cols}] tile is not whole groups of 4 runs of {block_len} cells "
                      f"(need [1, k * {group}] or [r, {group}])", node)
    grouped = p.temp(B.reshape(s, [cols // group, group], span=span), node)
    merged = p.temp(D.mrgsort(grouped, block_len, span=span), node)
    return B.reshape(merged, [1, cols], span=span)


def _merge_lists(p: Any, node: ast.Call, args: list, kwargs: dict) -> Any:
    """Format 2, ``pl.mrgsort(s0, s1[, s2[, s3]], exhausted=False)``: 2-4 sorted one-row record lists
    merged into one descending row (one ``tmrgsort`` with a scratch row as wide as the result).
    ``exhausted=True`` stops the merge when the first list runs out: the row then holds the records
    merged until then, and the cells past them are not written (the instruction's per-list counts
    are not a result of pl.mrgsort, spec pypto-jit §8)."""
    exhausted = kwargs.pop("exhausted", False)
    if kwargs:
        raise p.error(f"pl.mrgsort() got an unexpected keyword argument '{next(iter(kwargs))}'", node, PyptoTypeError)
    if not isinstance(exhausted, bool):
        raise p.error(f"pl.mrgsort(exhausted=...) takes True or False, got {exhausted!r}", node, PyptoTypeError)
    if not 2 <= len(args) <= 4 or any(_kind(a) != "tile" for a in args):
        raise p.error(f"pl.mrgsort format 2 merges 2 to 4 tiles of sorted records, got {len(args)} arguments", node,
                      PyptoTypeError)
    span = p.span(node)
    total = sum(_static_dims(p, node, a, "pl.mrgsort")[1] for a in args)
    tmp = p.temp(B.create_tile([1, total], args[0].type.dtype, MemorySpace.Vec, span=span), node)
    return D.mrgsort_lists(list(args), tmp, exhausted, span=span)


def gather(p: Any, node: ast.Call, args: list, kwargs: dict) -> Any:
    """The mask form ``pl.gather(x, mask_pattern=P, output_dtype=None)`` on a tile."""
    if "mask_pattern" not in kwargs:
        return _gather_index(p, node, args, kwargs)
    x, pattern, out = _bind_args(p, node, "pl.gather", ("x", "mask_pattern", "output_dtype"), args, kwargs, 2)
    if _kind(x) != "tile":
        raise p.error("pl.gather(mask_pattern=...) takes a tile", node, PyptoTypeError)
    name = MaskPattern(pattern).name if isinstance(pattern, int) else str(pattern)
    return D.gather_mask(x, name, out, span=p.span(node))


def _gather_compare(p: Any, node: ast.Call, args: list, kwargs: dict) -> tuple:
    """The compare form ``idx, cnt = pl.gather(x, kvalue=k, cmp_mode="gt", out_cols=n, offset=0)``: per
    row, the columns (+ offset) of the elements that compare with k, packed left into an INT32
    ``[rows, out_cols]`` tile, and their count in column 0 of an INT32 ``[rows, 8]`` tile (valid
    ``[rows, 1]``). One ``tgather`` writes both; each result is its own call (the other output goes
    to a scratch tile), so the instruction runs once per result used."""
    x, kvalue, cmp_mode, out_cols, offset = _bind_args(
        p, node, "pl.gather", ("x", "kvalue", "cmp_mode", "out_cols", "offset"),
        args, {"cmp_mode": "eq", "out_cols": None, "offset": 0, **kwargs}, 2)
    if _kind(x) != "tile":
        raise p.error("pl.gather(kvalue=...) takes a tile", node, PyptoTypeError)
    rows, cols = _static_dims(p, node, x, "pl.gather")
    out_cols = cols if out_cols is None else out_cols
    if not isinstance(out_cols, int) or not 0 < out_cols or not isinstance(offset, int):
        raise p.error("pl.gather(out_cols=, offset=) take integer literals (out_cols > 0)", node, PyptoTypeError)
    span = p.span(node)
    k = scalar_arg(kvalue, x.type.dtype, span)
    idx_shape, cnt_shape = [rows, out_cols], [rows, D.COUNT_COLS]
    cnt_sink = p.temp(B.create_tile(cnt_shape, DataType.INT32, MemorySpace.Vec, span=span), node)
    idx = p.temp(D.gather_cmp(x, k, cnt_sink, "indices", str(cmp_mode), offset, out_cols, span=span), node)
    idx_sink = p.temp(B.create_tile(idx_shape, DataType.INT32, MemorySpace.Vec, span=span), node)
    cnt = p.temp(D.gather_cmp(x, k, idx_sink, "counts", str(cmp_mode), offset, out_cols, span=span), node)
    return idx, cnt


def _gather_index(p: Any, node: ast.Call, args: list, kwargs: dict) -> Any:
    """``pl.tile.gather(src, idx[, tmp])`` (flat row-major indices into the whole tile) and the index form
    ``pl.gather(x, -1, idx)`` on one-row tiles, where a column index is the flat index."""
    if "kvalue" in kwargs or "cmp_mode" in kwargs:
        return _gather_compare(p, node, args, kwargs)
    if len(args) == 3 and isinstance(args[1], int) and not isinstance(args[1], bool):
        x, dim, idx = args
        if _kind(x) != "tile" or _kind(idx) != "tile":
            raise p.error("pl.gather(x, dim, idx) in InCore code takes tiles", node, PyptoTypeError)
        rows = _static_dims(p, node, x, "pl.gather")[0]
        if dim not in (-1, 1) or rows != 1:
            raise p.error("pl.gather(x, dim, idx): the emulator supports dim=-1 on one-row tiles (use "
                          "pl.tile.gather with flat indices for more rows)", node)
        return D.gather_index(x, idx, span=p.span(node))
    src, idx, _tmp = _bind_args(p, node, "pl.tile.gather", ("src", "idx", "tmp"), args, kwargs, 2)
    if _kind(src) != "tile" or _kind(idx) != "tile":
        raise p.error("pl.tile.gather(src, idx) takes tiles", node, PyptoTypeError)
    return D.gather_index(src, idx, span=p.span(node))


def arange(p: Any, node: ast.Call, args: list, kwargs: dict) -> Any:
    start, shape, dtype, descending = _bind_args(p, node, "pl.arange", ("start", "shape", "dtype", "descending"),
                                                 args, kwargs, 2)
    if not p.in_incore:
        raise p.error("Misplaced tensor op: pl.arange builds a tile; write it inside an InCore region", node)
    return D.arange(start, shape, dtype or DataType.INT32, bool(descending), span=p.span(node))


# name -> (handler, operand kinds it takes over: "tile", "tensor" or "any")
# name -> handler(p, node, args, kwargs); "slice" is chosen by its operand in handler()
OPS: dict[str, Any] = {
    "read": read, "write": write, "concat": concat, "transpose_view": transpose_view, "sort32": sort32,
    "mrgsort": mrgsort, "gather": gather, "arange": arange, "fillpad": fillpad, "load": load,
    "set_validshape": set_validshape, "fillpad_expand": fillpad_expand, "fillpad_inplace": fillpad_inplace,
    "split": optimizations.split, "cross_core_slot": optimizations.cross_core_slot,
    "task_dummy": tasks.task_dummy, "no_dep": tasks.no_dep,
    "aiv_shard": lanes.aiv_shard, "aic_gather": lanes.aic_gather,
}


def claims(path: list[str]) -> bool:
    """Whether ``pl.<name>`` / ``pl.tile.<name>`` / ``pl.tensor.<name>`` may be one of these ops."""
    if path[1:] == ["system", "task_dummy"]:
        return True
    if len(path) == 3 and path[1] not in ("tile", "tensor"):
        return False
    return len(path) in (2, 3) and (path[-1] in OPS or path[-1] == "slice")


def handler(ns: str, name: str, args: list, kwargs: dict, views: Any = ()) -> Any:
    """The handler of ``pl[.ns].name(...)``, or None when the call is not part of this surface (a
    ``pl.load`` or ``pl.fillpad`` without the jit-era keywords keeps the older surface's handling,
    unless it loads from one of ``views``, orchestration views with a valid shape)."""
    first = args[0] if args else next(iter(kwargs.values()), None)
    if name == "load" and not {"valid_shape", "clamp"} & set(kwargs) and not (isinstance(first, E.Var) and first in views):
        return None
    if name == "fillpad" and "pad_value" not in kwargs and not (len(args) > 1 and not isinstance(args[1], str)):
        return None
    if name == "slice":
        if ns == "tile" or _kind(first) == "tile":
            return tile_slice
        return tensor_slice if _kind(first) == "tensor" else None
    return OPS.get(name)
