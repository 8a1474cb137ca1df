"""Layout primitives on 1-D and 2-D tensors: broadcast_to, slice, concat, transpose, reshape.

Each is a copy through tiles, block by block, with the windows moved:

* ``broadcast_to(x, shape)``: the result's blocks read ``x``'s broadcast window (a row vector, column
  vector or single element) and expand it to the block (the expand ops of :mod:`pypto.lib.broadcast`);
* ``slice(x, shape, offset)``: the result's blocks read ``x`` at the block's window shifted by ``offset``;
* ``concat(a, b, axis)``: ``a``'s blocks are written at their own windows, then ``b``'s shifted by
  ``a``'s extent along ``axis``;
* ``transpose(x, 0, 1)`` of a 2-D tensor: each ``[tr, tc]`` block is transposed on chip (TTRANS) and
  written at the mirrored window;
* ``reshape``: by whole rows (one row length divides the other), each block re-viewed on chip.
"""

from __future__ import annotations

from pypto.enums import MemorySpace
from pypto.errors import CompileError
from pypto.ir import expr as E
from pypto.ir.expr import static_int
from pypto.lib import tiling
from pypto.lib.body import Body
from pypto.lib.broadcast import expand
from pypto.lib.elementwise import grid_of, map_blocks
from pypto.lib.emit import Emitter, Window, blocks, idx, shape2
from pypto.lib.ops import cast_tensor_to_tile, cast_tile_to_tensor
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
    return [o if not d else (idx(o.value + d) if isinstance(o, E.ConstInt) else o + d) for o, d in zip(offsets, by,
                                                                                                   strict=True)]


def copy_blocks(em: Emitter, src: E.Var, shape: tuple, out: E.Var, src_at: list, dst_at: list,
                span: object) -> E.Var:
    """``out[dst_at + w] = src[src_at + w]`` for every window ``w`` of a ``shape`` grid."""
    rows, cols, rank1, lead = grid_of(shape)
    if lead:
        raise CompileError(f"slice/concat are tiled over 1-D and 2-D tensors here; got rank {len(shape)}", span)
    plan = tiling.plan(rows, cols, [src.type.dtype], 2, row_vectors=False, span=span)

    def block(e: Emitter, win: Window, carried: list) -> list:
        offs = [win.co] if rank1 else [win.ro, win.co]
        sizes = [win.tc] if rank1 else [win.tr, win.tc]
        t = e.let(f"{src.name}_t", cast_tensor_to_tile(src, _shift(offs, src_at), sizes, list(win.valid), span=span))
        v = e.let(f"{t.name}_v", cast_tile_to_tensor(t, span=span))
        return [e.let(out.name.split("_it")[0], T.assemble(carried[0], v, _shift(offs, dst_at), span=span))]

    return blocks(em, plan, [out], block, rank1=rank1)[0]


def _static(xs: tuple, what: str, span: object) -> list[int]:
    vals = [static_int(x) for x in xs]
    if None in vals:
        raise CompileError(f"{what} must be constants to be tiled", span)
    return vals


@definition("tensor.slice")
def _slice(em: Emitter, call: E.Call, out: E.Var) -> E.Var:
    x = call.args[0]
    offs = _static(call.args[2].elements, "slice offsets", call.span)
    shape = shape2(call.type)
    return copy_blocks(em, x, shape, out, offs, [0] * len(shape), call.span)


@definition("tensor.concat")
def _concat(em: Emitter, call: E.Call, out: E.Var) -> E.Var:
    a, b = call.args
    rank = len(shape2(a.type))
    axis = call.kwargs.get("axis", 0) % rank
    zero = [0] * rank
    out = copy_blocks(em, a, shape2(a.type), out, zero, zero, call.span)
    at = [shape2(a.type)[axis] if d == axis else 0 for d in range(rank)]
    return copy_blocks(em, b, shape2(b.type), out, zero, at, call.span)


@definition("tensor.transpose")
def _transpose(em: Emitter, call: E.Call, out: E.Var) -> E.Var:
    x = call.args[0]
    shape = shape2(x.type)
    if len(shape) != 2:
        raise CompileError(f"transpose is tiled over 2-D tensors here; got rank {len(shape)}", call.span)
    rows, cols = shape
    # square blocks, aligned for both orientations (a block's rows become the result's columns)
    p = tiling.plan(rows, cols, [x.type.dtype], 3, span=call.span)
    side = max(tiling.col_align(x.type.dtype), min(p.tr, p.tc) // tiling.col_align(x.type.dtype)
               * tiling.col_align(x.type.dtype))
    plan = tiling.Plan(rows, cols, side, side)

    def block(e: Emitter, win: Window, carried: list) -> list:
        t = e.let(f"{x.name}_t", cast_tensor_to_tile(x, [win.ro, win.co], [side, side], [win.vr, win.vc],
                                                     span=call.span))
        tmp = e.let("tmp", B.create_tile([side, side], x.type.dtype, MemorySpace.Vec, span=call.span))
        tt = e.let("trans", B.transpose(t, 0, 1, tmp, span=call.span), (win.vc, win.vr))
        v = e.let(f"{tt.name}_v", cast_tile_to_tensor(tt, span=call.span))
        return [e.let(out.name.split("_it")[0], T.assemble(carried[0], v, [win.co, win.ro], span=call.span))]

    return blocks(em, plan, [out], block)[0]


def _rows_cols(shape: tuple) -> tuple[int, int]:
    return (1, shape[0]) if len(shape) == 1 else (shape[0], shape[1])


@definition("tensor.reshape")
def _reshape(em: Emitter, call: E.Call, out: E.Var) -> E.Var:
    """Row-major reshape of 1-D/2-D tensors by whole rows: a block of ``g`` source rows of ``c1``
    elements is the block of ``g * c1 / c2`` result rows of ``c2`` (or the reverse), re-viewed on
    chip with ``block.reshape`` (the same bytes, so both row lengths must fill whole 32-byte units)."""
    x = call.args[0]
    src, dst = shape2(x.type), shape2(call.type)
    dtype = x.type.dtype
    if len(src) > 2 or len(dst) > 2:
        raise CompileError("reshape is tiled between 1-D and 2-D tensors here", call.span)
    r1, c1 = _rows_cols(src)
    r2, c2 = _rows_cols(dst)
    unit = tiling.col_align(dtype)
    if c1 == c2 and len(src) == len(dst):
        return copy_blocks(em, x, dst, out, [0] * len(dst), [0] * len(dst), call.span)
    big, small = max(c1, c2), min(c1, c2)
    if big % small or c1 % unit or c2 % unit:
        raise CompileError(
            f"reshape {list(src)} -> {list(dst)}: tiled only when one row length divides the other and both are "
            f"multiples of {unit} {dtype.name} elements (32 bytes)", call.span)
    k = big // small
    # blocks over the rows of the wider side; each is k rows of the narrower side
    wide_rows = r1 if c1 == big else r2
    plan = tiling.plan(wide_rows, big, [dtype], 2, row_vectors=False, span=call.span)
    if plan.chunked:
        raise CompileError(f"reshape: a row of {big} {dtype.name} elements does not fit a tile", call.span)

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
        t = e.let(f"{x.name}_t", cast_tensor_to_tile(x, so, ss, sv, span=call.span))
        do, ds, dv = window(dst, dst_rows_per, win.ro, win.vr, c2)
        r = e.let("reshaped", B.reshape(t, ds, span=call.span), tuple(dv))
        v = e.let(f"{r.name}_v", cast_tile_to_tensor(r, span=call.span))
        return [e.let(out.name.split("_it")[0], T.assemble(carried[0], v, do, span=call.span))]

    return blocks(em, plan, [out], block)[0]
