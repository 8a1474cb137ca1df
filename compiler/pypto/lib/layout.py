"""Layout primitives (any rank): broadcast_to, slice, concat, transpose, reshape.

Each is a copy through tiles, block by block, with the windows moved:

* ``broadcast_to(x, shape)``: the result's blocks read ``x``'s broadcast window (a row vector, column
  vector or single element) and expand it to the block (the expand ops of :mod:`pypto.lib.broadcast`);
* ``slice(x, shape, offset)``: the result's blocks read ``x`` at the block's window shifted by ``offset``;
* ``concat(a, b, axis)``: ``a``'s blocks are written at their own windows, then ``b``'s shifted by
  ``a``'s extent along ``axis``;
* ``transpose(x, i, j)`` of any two axes of any rank (:func:`permute`): a swap that keeps the last
  axis is a strided copy (a block's rows read along whichever axis of ``x`` they come from); one that
  makes ``x``'s last axis the result's rows transposes each square block on chip (TTRANS); one that
  moves the last axis elsewhere is both, through a GM workspace;
* ``reshape``: of a kernel's read-only argument, a copy from a second GM view of its bytes with the
  result's shape (``tensor.as_shape``); of anything else by whole rows (one row length divides the
  other), each block re-viewed on chip; N-D, boxes of several whole rows of both shapes; any other
  order-preserving reshape (any ranks) copies runs of ``gcd`` of the two last dims.

Slice, concat and the copies loop over the result's leading dims (the dims before the last two),
as the element-wise ops do.
"""

from __future__ import annotations

import math
from typing import Any

from pypto.enums import MemorySpace
from pypto.errors import CompileError
from pypto.ir import expr as E
from pypto.ir.expr import static_int
from pypto.ir.types import TensorType, shape_str, static_shape
from pypto.lib import tiling
from pypto.lib.body import Body
from pypto.lib.broadcast import expand
from pypto.lib.elementwise import grid_of, map_blocks
from pypto.lib.emit import DYNAMIC_SUPPORT, Emitter, Window, blocks, dims, idx, shape2
from pypto.lib.ops import as_shape, cast_tensor_to_tile, cast_tile_to_tensor
from pypto.lib.registry import definition
from pypto.ops import block as B
from pypto.ops import tensor as T


@definition("tensor.broadcast_to")
def _broadcast_to(em: Emitter, call: E.Call, out: E.Var) -> E.Var:
    def body(b: Body, t: list, k: list) -> E.Var:
        w = b.win
        if k[0] == "full":
            return t[0]
        full = [1, w.tc] if w.rank1 else [w.tr, w.tc]
        v = t[0] if len(t[0].type.shape) == 2 else b.op("reshape", t[0], [1, static_int(t[0].type.shape[0])])
        r = expand(v, k[0], full, b.bind, b.em.span)
        return b.op("reshape", r, [w.tc]) if w.rank1 else r

    return map_blocks(em, call, out, [call.args[0]], body, call.type.dtype)


def _shift(offsets: list, by: list) -> list:
    """``offsets + by``, element by element (``by`` may hold a dynamic extent: an expression)."""
    def one(o: Any, d: Any) -> Any:
        if isinstance(d, int) and d == 0:
            return o
        if isinstance(d, int) and isinstance(o, E.ConstInt):
            return idx(o.value + d)
        return o + d

    return [one(o, d) for o, d in zip(offsets, by, strict=True)]


def _permuted(at: list, perm: tuple, fill: object) -> list:
    """The source's list for a result's list ``at``: source axis ``perm[k]`` gets ``at[k]``."""
    out = [fill] * len(perm)
    for k, p in enumerate(perm):
        out[p] = at[k]
    return out


def _store(em: Emitter, t: E.Var, out: E.Var, offs: list, sizes: list, valid: tuple, span: object) -> E.Var:
    """``out`` with tile ``t`` (re-viewed as its ``sizes`` tile, no data moves) assembled at ``offs``."""
    if [static_int(d) for d in t.type.shape] != list(sizes):
        t = em.let(f"{t.name}_2d", B.reshape(t, sizes, span=span), tuple(valid))
    v = em.let(f"{t.name}_v", cast_tile_to_tensor(t, rank=len(offs), span=span))
    return em.let(out.name.split("_it")[0], T.assemble(out, v, offs, span=span))


def copy_blocks(em: Emitter, src: E.Var, shape: tuple, out: E.Var, src_at: list, dst_at: list,
                span: object, perm: tuple | None = None) -> E.Var:
    """``out[dst_at + i] = src[src_at + perm(i)]`` for every index ``i`` of a ``shape`` grid (any rank):
    result axis ``k`` is source axis ``perm[k]`` (the identity by default) and the last axis stays.
    Blocks of the result's last two dims, the leading dims looped over; each block is one TLOAD of
    the source window (strided along whichever source axis holds the block's rows) and one TSTORE."""
    rows, cols, rank1, lead = grid_of(shape)
    rank = len(shape)
    perm = tuple(range(rank)) if perm is None else tuple(perm)
    plan = tiling.plan(rows, cols, [src.type.dtype], 2, row_vectors=False, span=span)

    def block(e: Emitter, win: Window, carried: list) -> list:
        sizes = [win.tc] if rank1 else [win.tr, win.tc]
        offs = list(win.lead) + ([win.co] if rank1 else [win.ro, win.co])
        ones = [1] * len(win.lead)
        t = e.let(f"{src.name}_t", cast_tensor_to_tile(src, _shift(_permuted(offs, perm, idx(0)), src_at),
                                                       _permuted(ones + sizes, perm, 1),
                                                       _permuted(ones + list(win.valid), perm, 1), span=span))
        return [_store(e, t, carried[0], _shift(offs, dst_at), sizes, win.valid, span)]

    return blocks(em, plan, [out], block, rank1=rank1, lead=lead)[0]


def _static(xs: tuple, what: str, span: object) -> list[int]:
    vals = [static_int(x) for x in xs]
    if None in vals:
        raise CompileError(f"{what} must be constants to be tiled", span)
    return vals


@definition("tensor.slice")
def _slice(em: Emitter, call: E.Call, out: E.Var) -> E.Var:
    x = call.args[0]
    offs = _static(call.args[2].elements, "slice offsets", call.span)
    shape = shape2(call.type, call.op.name)
    return copy_blocks(em, x, shape, out, offs, [0] * len(shape), call.span)


@definition("tensor.concat")
def _concat(em: Emitter, call: E.Call, out: E.Var) -> E.Var:
    a, b = call.args
    rank = len(a.type.shape)
    axis = call.kwargs.get("axis", 0) % rank
    zero = [0] * rank
    out = copy_blocks(em, a, dims(a.type), out, zero, zero, call.span)  # any dim but the axis may be dynamic
    at = [dims(a.type)[axis] if d == axis else 0 for d in range(rank)]
    return copy_blocks(em, b, dims(b.type), out, zero, at, call.span)


def transpose_blocks(em: Emitter, x: E.Var, out: E.Var, perm: tuple, span: object) -> E.Var:
    """``out = x`` permuted by ``perm`` (result axis ``k`` is ``x``'s axis ``perm[k]``) where ``x``'s last
    axis becomes the result's rows (``perm[-2]`` is the last axis): square blocks of the result's last
    two dims, each read as the ``[cols, rows]`` window of ``x`` (its rows strided along ``x``'s axis
    ``perm[-1]``), transposed on chip (TTRANS) and stored; the leading dims looped over."""
    shape = dims(out.type)
    rank = len(shape)
    rows, cols, _, lead = grid_of(shape)
    dtype = x.type.dtype
    # square blocks, aligned for both orientations (a block's rows become the result's columns)
    unit = tiling.col_align(dtype)
    p = tiling.plan(rows, cols, [dtype], 3, span=span)
    side = max(unit, min(p.tr, p.tc) // unit * unit)
    plan = tiling.Plan(rows, cols, side, side)
    ones = [1] * len(lead)

    def block(e: Emitter, win: Window, carried: list) -> list:
        offs = list(win.lead) + [win.ro, win.co]
        sizes = _permuted(ones + [1, side], perm, 1)
        sizes[-1] = side
        valid = _permuted(ones + [1, win.vc], perm, 1)
        valid[-1] = win.vr
        t = e.let(f"{x.name}_t", cast_tensor_to_tile(x, _permuted(offs, perm, idx(0)), sizes, valid, span=span))
        if rank > 2:
            t = e.let(f"{x.name}_2d", B.reshape(t, [side, side], span=span), (win.vc, win.vr))
        tmp = e.let("tmp", B.create_tile([side, side], dtype, MemorySpace.Vec, span=span))
        tt = e.let("trans", B.transpose(t, 0, 1, tmp, span=span), (win.vr, win.vc))
        return [_store(e, tt, carried[0], offs, [side, side], (win.vr, win.vc), span)]

    return blocks(em, plan, [out], block, lead=lead)[0]


def permute(em: Emitter, x: E.Var, out: E.Var, perm: tuple, span: object) -> E.Var:
    """``out = x.transpose(perm)`` (NumPy's meaning: result axis ``k`` is ``x``'s axis ``perm[k]``), any rank.

    * the last axis stays: one strided copy (:func:`copy_blocks`);
    * ``x``'s last axis becomes the result's rows: one pass of tile transposes (:func:`transpose_blocks`);
    * otherwise two passes through a GM workspace: first the tile transposes to ``y`` (``x``'s last
      axis to ``y``'s rows, the result's last axis to ``y``'s last), then the strided copy ``y -> out``
      that keeps the last axis."""
    rank = len(perm)
    last = rank - 1
    if perm[last] == last:
        return copy_blocks(em, x, dims(out.type), out, [0] * rank, [0] * rank, span, perm)
    if perm[last - 1] == last:
        return transpose_blocks(em, x, out, perm, span)
    first = tuple(a for a in range(rank) if a not in (last, perm[last])) + (last, perm[last])
    y = em.workspace(TensorType(tuple(x.type.shape[a] for a in first), x.type.dtype), "perm")
    y = transpose_blocks(em, x, y, first, span)
    where = {a: k for k, a in enumerate(first)}  # x's axis -> y's axis
    return copy_blocks(em, y, dims(out.type), out, [0] * rank, [0] * rank, span,
                       tuple(where[perm[k]] for k in range(rank)))


@definition("tensor.transpose")
def _transpose(em: Emitter, call: E.Call, out: E.Var) -> E.Var:
    """A swap of any two axes of any rank (:func:`permute`)."""
    x = call.args[0]
    rank = len(x.type.shape)  # any dim may be dynamic: the copies loop with run-time bounds
    i, j = (static_int(a) % rank for a in call.args[1:3])
    perm = list(range(rank))
    perm[i], perm[j] = j, i
    return permute(em, x, out, tuple(perm), call.span)


@definition("tensor.permute")
def _permute(em: Emitter, call: E.Call, out: E.Var) -> E.Var:
    """Any permutation of any rank (NumPy ``np.transpose(x, axes)``): :func:`permute`."""
    x = call.args[0]
    rank = len(x.type.shape)
    perm = tuple(static_int(a) % rank for a in call.args[1].elements)
    return permute(em, x, out, perm, call.span)


def _rows_cols(shape: tuple) -> tuple[int, int]:
    return (1, shape[0]) if len(shape) == 1 else (shape[0], shape[1])


def _linear(i: E.Expr, scale: int, offset: Any = 0) -> E.Expr:
    """``i * scale + offset`` (folded when ``i`` and ``offset`` are constants)."""
    if isinstance(i, E.ConstInt) and isinstance(offset, int):
        return idx(i.value * scale + offset)
    e = i * scale if scale != 1 else i
    return e + offset if not (isinstance(offset, int) and offset == 0) else e


def _unflatten(flat: E.Expr, shape: tuple) -> list:
    """The row-major index of flat element ``flat`` of a ``shape`` tensor."""
    out = []
    for k, d in enumerate(shape):
        stride = math.prod(shape[k + 1:])
        if isinstance(flat, E.ConstInt):
            out.append(idx(flat.value // stride % d))
            continue
        q = E.floordiv(flat, stride) if stride != 1 else flat
        out.append(E.mod(q, d) if k else q)
    return out


def reshape_by_runs(em: Emitter, x: E.Var, out: E.Var, span: object) -> E.Var:
    """Any reshape of a contiguous tensor that keeps the element order (any ranks): the data is copied
    in runs of ``gcd(last dim of x, last dim of the result)`` consecutive elements, each one row piece
    of both (so a ``[1, run]`` window of each), a run longer than a tile in pieces. A loop over the
    runs; the window offsets are computed from the run's flat index."""
    src, dst = dims(x.type), dims(out.type)  # leading dims may be dynamic: the run count is then run-time
    dtype = x.type.dtype
    if not isinstance(src[-1], int) or not isinstance(dst[-1], int):
        raise CompileError(f"tensor.reshape of a dynamic last axis ({shape_str(x.type.shape)} -> "
                           f"{shape_str(out.type.shape)}) is not tiled: {DYNAMIC_SUPPORT}", span)
    run = math.gcd(src[-1], dst[-1])
    unit = tiling.col_align(dtype)
    piece = min(run, max(unit, tiling.max_tile_bytes() // dtype.nbytes // unit * unit))
    segments = [(0, run // piece, piece)] + ([(run // piece * piece, 1, run % piece)] if run % piece else [])
    width = tiling.ceil_to(piece, unit)

    def window(shape: tuple, flat: E.Expr, valid: int) -> tuple[list, list, list]:
        ones = [1] * (len(shape) - 1)
        return _unflatten(flat, shape), ones + [width], ones + [valid]

    def one_run(e: Emitter, r: E.Expr, carried: list) -> list:
        for start, count, valid in segments:
            def one_piece(ee: Emitter, j: E.Expr, c: list, start: int = start, valid: int = valid) -> list:
                first = _linear(j, piece, start)
                flat = _linear(r, run, first.value) if isinstance(first, E.ConstInt) else _linear(r, run) + first
                offs, sizes, vals = window(src, flat, valid)
                t = ee.let(f"{x.name}_t", cast_tensor_to_tile(x, offs, sizes, vals, span=span))
                if len(src) != min(len(dst), 2):  # a 1-D tile for a 1-D result, else a [1, width] one
                    one = len(dst) == 1
                    t = ee.let(f"{x.name}_row", B.reshape(t, [width] if one else [1, width], span=span),
                               (valid,) if one else (1, valid))
                doffs = _unflatten(flat, dst)
                v = ee.let(f"{t.name}_v", cast_tile_to_tensor(t, rank=len(dst), span=span))
                return [ee.let(out.name.split("_it")[0], T.assemble(c[0], v, doffs, span=span))]

            carried = e.loop(count, carried, one_piece, "rp")
        return carried

    return em.loop(_count(src, run), [out], one_run, "rr")[0]


def _count(shape: tuple, run: int) -> int | E.Expr:
    """The number of ``run``-element runs in a ``shape`` tensor (a run-time count for dynamic dims; ``run``
    divides the static last dim)."""
    static = math.prod(d for d in shape if isinstance(d, int))
    count: int | E.Expr = static // run
    for d in shape:
        if not isinstance(d, int):
            count = d if isinstance(count, int) and count == 1 else count * d
    return count


def _box(dims: tuple, h: int) -> list[int] | None:
    """The window sizes over ``dims`` of ``h`` consecutive elements starting at a multiple of ``h``, if
    those form one box (``h`` is ``k`` times the product of the dims after some dim ``j``, and ``k``
    divides dim ``j``); ``None`` when they do not."""
    inner = 1
    for j in range(len(dims) - 1, -1, -1):
        if h % inner == 0 and (h // inner) <= dims[j] and dims[j] % (h // inner) == 0:
            return [1] * j + [h // inner] + list(dims[j + 1:])
        inner *= dims[j]
    return None


def _lstrip_ones(sizes: list) -> list:
    k = 0
    while k < len(sizes) - 2 and sizes[k] == 1:
        k += 1
    return sizes[k:]


def reshape_by_rows(em: Emitter, x: E.Var, out: E.Var, span: object) -> E.Var | None:
    """A reshape in runs of whole rows of both shapes (any ranks): a run of ``n`` elements is ``n / c1``
    source rows and ``n / c2`` result rows (``c1``, ``c2`` the last dims), each one box of its shape's
    row dims, ``n`` the largest such that fits a tile (``(3, 4, 64) -> (12, 64)`` moves ``[3, 4, 64]``
    at once, ``(2, 3, 64) -> (3, 128)`` moves six source rows, where a run of ``gcd`` would move one
    row); each run is one TLOAD, a re-view on chip and one TSTORE. Rows of different lengths must be
    whole 32-byte units (the re-view keeps the bytes). ``None`` when no run longer than ``gcd`` exists."""
    src, dst = shape2(x.type), shape2(out.type)
    dtype = x.type.dtype
    c1, c2 = src[-1], dst[-1]
    rows_s, rows_d = tuple(src[:-1]), tuple(dst[:-1])
    unit = tiling.col_align(dtype)
    if not rows_s or not rows_d or (c1 != c2 and (c1 % unit or c2 % unit)):
        return None
    total = math.prod(src)
    step = math.lcm(c1, c2)
    cap = min(tiling.budget_bytes() // 2, tiling.max_tile_bytes()) // dtype.nbytes
    n = next((n for n in range(cap // step * step, step - 1, -step)
              if total % n == 0 and _box(rows_s, n // c1) and _box(rows_d, n // c2)), None)
    if n is None or n <= math.gcd(c1, c2):
        return None
    s_sizes, d_sizes = _box(rows_s, n // c1) + [c1], _box(rows_d, n // c2) + [c2]

    def one_run(e: Emitter, r: E.Expr, carried: list) -> list:
        t = e.let(f"{x.name}_t", cast_tensor_to_tile(x, _unflatten(_linear(r, n // c1), rows_s) + [idx(0)], s_sizes,
                                                    s_sizes, span=span))
        t = e.let(f"{x.name}_r", B.reshape(t, _lstrip_ones(d_sizes), span=span))
        v = e.let(f"{t.name}_v", cast_tile_to_tensor(t, rank=len(dst), span=span))
        return [e.let(out.name.split("_it")[0], T.assemble(carried[0], v, _unflatten(_linear(r, n // c2), rows_d)
                                                          + [idx(0)], span=span))]

    return em.loop(total // n, [out], one_run, "rr")[0]


@definition("tensor.reshape")
def _reshape(em: Emitter, call: E.Call, out: E.Var) -> E.Var:
    return reshape_into(em, call.args[0], out, call.span)


def reshape_by_view(em: Emitter, x: E.Var, out: E.Var, span: object) -> E.Var:
    """A reshape of a kernel's read-only argument: its GM bytes viewed with the result's shape
    (``tensor.as_shape``, a second tensor view of the same pointer: the data is row-major and
    contiguous), then copied block by block like a slice of the whole. No run is shorter than a
    result row (a run of ``gcd`` of the last dims could be 4 elements: (2, 2, 9000) -> (9000, 4) moved
    9000 of them, 4874895 cycles, 7278 this way)."""
    xv = em.let(f"{x.name}_as", as_shape(x, [static_int(d) for d in out.type.shape], span=span))
    rank = len(out.type.shape)
    return copy_blocks(em, xv, dims(out.type), out, [0] * rank, [0] * rank, span)


def reshape_into(em: Emitter, x: E.Var, out: E.Var, span: object) -> E.Var:
    """``out`` = ``x`` reshaped, row-major (also how a reduction drops its kept unit dims). Between
    1-D/2-D tensors by whole rows (one row length divides the other and both fill whole 32-byte units): a block of ``g`` source rows of ``c1`` elements is the block of
    ``g * c1 / c2`` result rows of ``c2`` (or the reverse), re-viewed on chip with ``block.reshape``;
    when such a row is wider than a tile, runs of the narrower row in tile-wide pieces. N-D reshapes
    move boxes of whole rows of both shapes where they exist (:func:`reshape_by_rows`); any other
    reshape copies runs of elements (:func:`reshape_by_runs`)."""
    if static_shape(x.type) is None or static_shape(out.type) is None:  # dynamic leading dims: runs
        return reshape_by_runs(em, x, out, span)
    src, dst = shape2(x.type, "tensor.reshape"), shape2(out.type, "tensor.reshape")
    dtype = x.type.dtype
    viewable = x in em.inputs  # an argument nothing in the kernel writes: its bytes viewed with the new shape
    if viewable and len(dst) <= 2:
        return reshape_by_view(em, x, out, span)
    if len(src) > 2 or len(dst) > 2:
        # an N-D result: boxes of whole rows of both shapes move more at once than the result's own
        # blocks (one per leading index) where they exist ((2, 3, 64) -> (6, 2, 32): 2168 vs 3267 cycles)
        by_rows = reshape_by_rows(em, x, out, span)
        if by_rows is not None:
            return by_rows
        return reshape_by_view(em, x, out, span) if viewable else reshape_by_runs(em, x, out, span)
    r1, c1 = _rows_cols(src)
    r2, c2 = _rows_cols(dst)
    unit = tiling.col_align(dtype)
    if c1 == c2 and len(src) == len(dst):
        return copy_blocks(em, x, dst, out, [0] * len(dst), [0] * len(dst), span)
    big, small = max(c1, c2), min(c1, c2)
    if big % small or c1 % unit or c2 % unit:
        return reshape_by_runs(em, x, out, span)
    k = big // small
    # blocks over the rows of the wider side; each is k rows of the narrower side
    wide_rows = r1 if c1 == big else r2
    plan = tiling.plan(wide_rows, big, [dtype], 2, row_vectors=False, span=span)
    if plan.chunked:  # a row wider than a tile: runs of the narrower row, each in tile-wide pieces
        return reshape_by_runs(em, x, out, span)

    def window(shape: tuple, rows_of: int, ro: E.Expr, vr: int, c: int) -> tuple[list, list, list]:
        if len(shape) == 1:
            off = ro * (rows_of * c) if not isinstance(ro, E.ConstInt) else idx(ro.value * rows_of * c)
            return [off], [plan.tr * rows_of * c], [vr * rows_of * c]
        off = ro * rows_of if not isinstance(ro, E.ConstInt) else idx(ro.value * rows_of)
        return [off, idx(0)], [plan.tr * rows_of, c], [vr * rows_of, c]

    src_rows_per = 1 if c1 == big else k
    dst_rows_per = 1 if c2 == big else k

    def block(e: Emitter, win: Window, carried: list) -> list:
        so, ss, sv = window(src, src_rows_per, win.ro, win.vr, c1)
        t = e.let(f"{x.name}_t", cast_tensor_to_tile(x, so, ss, sv, span=span))
        do, ds, dv = window(dst, dst_rows_per, win.ro, win.vr, c2)
        r = e.let("reshaped", B.reshape(t, ds, span=span), tuple(dv))
        v = e.let(f"{r.name}_v", cast_tile_to_tensor(r, span=span))
        return [e.let(out.name.split("_it")[0], T.assemble(carried[0], v, do, span=span))]

    return blocks(em, plan, [out], block)[0]
