"""Reductions: sum, max, min and mean over any axis or axes, ``keepdim``.

* Over the last axis (a row reduction): row blocks of whole rows, ``row_<op>`` per block. A row
  wider than a tile is reduced by a **two-level loop**: the outer loop over row blocks, the inner
  loop over column chunks, the partial ``[tr, 1]`` result carried from chunk to chunk and combined
  with ``add``/``maximum``/``minimum``.
* Over the first axis of a 2-D tensor (a column reduction): column blocks, ``<op>(axis=0)`` per block,
  and the same two-level loop over row chunks when the column is taller than a tile.
* Over both axes: the column reduction into a ``[1, C]`` workspace, then the row reduction of it.
* N-D tensors (rank 3 and more) over the last axis: the row reduction, the leading dims looped
  over. Over other axes: one axis at a time, the last first, through GM
  workspaces: the second-to-last axis is the column reduction per leading index, an earlier axis
  is combined element-wise block by block over its indices (:func:`reduce_outer`); without
  ``keepdim`` the kept result is then reshaped into the output.
* ``mean`` is the sum scaled by ``1 / count`` once the reduction is complete.
* A ``sum``/``mean`` of FP16 or BF16 accumulates in FP32 (each tile cast up, the result cast back
  once), as NumPy and torch do: 4096 FP16 values near 62 sum past FP16's 65504.

The tail chunk of a reduction is padded with the reduction's identity (:func:`pypto.lib.tiling.pad_for`).
A result with no dims left (every axis reduced without ``keepdim``) is refused with a message:
kernels write tensors, so ask for ``keepdim=True``.
"""

from __future__ import annotations

from dataclasses import replace

from pypto.dtype import DataType
from pypto.errors import CompileError
from pypto.ir import expr as E
from pypto.ir.types import TensorType, shape_str
from pypto.lib import tiling
from pypto.lib.body import Body, work_dtype
from pypto.lib.emit import (
    Emitter,
    Window,
    assemble,
    blocks,
    dims,
    grid_shape,
    idx,
    inverse,
    offset_of,
    read,
    write,
)
from pypto.lib.layout import reshape_into
from pypto.lib.ops import reduce_axes
from pypto.lib.registry import definition
from pypto.lib.tiling import Plan
from pypto.ops import block as B

COMBINE = {"sum": "add", "max": "maximum", "min": "minimum"}
LIVE = 3  # the input tile, the scratch of row_<op> and the result


def accumulator_dtype(dtype: DataType, reduce: str, ops: tuple[str, ...]) -> DataType:
    """The dtype a reduction computes in: FP32 for a ``sum`` (and so ``mean``) of a float narrower than
    FP32, as NumPy and torch accumulate FP16/BF16 sums, so that many values do not overflow FP16's
    65504 or lose BF16's 8-bit significand before the result is rounded once; ``max``/``min`` are exact
    in any dtype and keep :func:`work_dtype`'s choice."""
    if reduce == "sum" and dtype.is_float() and dtype.bits < DataType.FP32.bits:
        return DataType.FP32
    return work_dtype(dtype, ops)


def combine(b: Body, reduce: str, acc: E.Var, part: E.Var) -> E.Var:
    return b.op(COMBINE[reduce], acc, part)


def row_stat(em: Emitter, plan: Plan, win: Window, reduce: str, term: callable, work: DataType) -> E.Var:
    """``[tr, 1]``: ``reduce`` over the row block ``win`` of the tile ``term(body, chunk_window)``
    (a whole-row tile, or chunk by chunk with the partial result carried through a loop)."""
    first = replace(win, co=idx(0), vc=E.min_(plan.cols, plan.tc) if plan.dynamic_cols else min(plan.tc, plan.cols))
    b = Body(em, first)
    acc = b.row_reduce(reduce, b.cast(term(b, first), work))
    if plan.dynamic_cols:  # the chunks after the first, up to the run-time width (none if it fits one)
        def dyn_chunk(e: Emitter, j: E.Expr, carried: list) -> list:
            co = j + plan.tc
            w = replace(win, co=co, vc=E.min_(plan.cols - co, plan.tc))
            cb = Body(e, w)
            return [combine(cb, reduce, carried[0], cb.row_reduce(reduce, cb.cast(term(cb, w), work)))]

        (acc,) = em.loop(plan.cols - plan.tc, [acc], dyn_chunk, "bk", step=plan.tc)
        return acc
    rest = plan.cols - plan.tc
    if rest <= 0:
        return acc
    for start, count, valid in Plan(plan.rows, rest, plan.tr, plan.tc).segments(1):
        def chunk(e: Emitter, j: E.Expr, carried: list, s: int = start, v: int = valid) -> list:
            w = replace(win, co=offset_of(plan.tc + s, j, plan.tc), vc=v)
            cb = Body(e, w)
            part = cb.row_reduce(reduce, cb.cast(term(cb, w), work))
            return [combine(cb, reduce, carried[0], part)]

        (acc,) = em.loop(count, [acc], chunk, "bk")
    return acc


def squeeze(em: Emitter, t: E.Var, length: int, valid: int) -> E.Var:
    """A ``[n, 1]`` or ``[1, n]`` result as the ``[n]`` vector a ``keepdim=False`` output holds
    (``block.reshape`` is a view: the same bytes)."""
    return em.let(f"{t.name}_1d", B.reshape(t, [length], span=em.span), (valid,))


def reduce_rows(em: Emitter, x: E.Var, out: E.Var, reduce: str, scale: float | None, span: object) -> E.Var:
    """``out[..., r] = reduce(x[..., r, :])`` (``out`` is ``[..., R, 1]`` or ``[..., R]``); the dims
    before the last two are looped over."""
    shape = grid_shape(x.type, f"{reduce} over the last axis")
    rows, cols = shape[-2:]
    lead = tuple(shape[:-2])
    dtype = x.type.dtype
    work = accumulator_dtype(dtype, reduce, ("row_" + reduce, COMBINE[reduce], "muls"))
    plan = tiling.plan(rows, cols, [dtype, out.type.dtype, work], span=span)
    pad = tiling.pad_for(reduce)

    def block(e: Emitter, win: Window, carried: list) -> list:
        r = row_stat(e, plan, win, reduce, lambda b, w: read(b.em, x, w, pad=pad), work)
        b = Body(e, win)
        if scale is not None:
            r = b.scalar("muls", r, scale)
        r = b.cast(r, out.type.dtype)
        if len(out.type.shape) < len(shape):
            return [assemble(e, squeeze(e, r, win.tr, win.vr), carried[0], [win.ro], win)]
        return [write(e, r, carried[0], win, "row")]

    return blocks(em, plan, [out], block, cols=False, lead=lead)[0]


def _over_lead(em: Emitter, lead: tuple, carried: list, fn: callable, indices: tuple = ()) -> list:
    """``fn(em, indices, carried)`` inside one loop per extent of ``lead`` (the leading dims)."""
    if not lead:
        return fn(em, indices, carried)
    return em.loop(lead[0], carried, lambda e, i, c: _over_lead(e, lead[1:], c, fn, (*indices, i)), "li")


def reduce_cols(em: Emitter, x: E.Var, out: E.Var, reduce: str, scale: float | None, span: object) -> E.Var:
    """``out[..., c] = reduce(x[..., :, c])`` over the second-to-last axis (``out`` is ``[..., 1, C]``,
    or ``[C]`` for a 2-D ``x``): the leading dims looped over, column blocks, row chunks inner when a
    column is taller than one tile."""
    shape = dims(x.type)
    rows, cols = shape[-2:]
    lead = tuple(shape[:-2])
    dtype = x.type.dtype
    work = accumulator_dtype(dtype, reduce, (reduce, COMBINE[reduce], "muls"))
    plan = tiling.plan(rows, cols, [dtype, work], LIVE, row_vectors=False, span=span)
    pad = tiling.pad_for(reduce)

    def column_block(e: Emitter, co: E.Expr, vc: int, carried: list, li: tuple) -> list:
        first_rows = E.min_(rows, plan.tr) if plan.dynamic_rows else min(plan.tr, rows)
        first = Window(idx(0), co, first_rows, vc, plan.tr, plan.tc, lead=li)
        b = Body(e, first)
        acc = b.col_reduce(reduce, b.cast(read(e, x, first, pad=pad), work))

        def part(ce: Emitter, w: Window, c: list) -> list:
            cb = Body(ce, w)
            return [combine(cb, reduce, c[0], cb.col_reduce(reduce, cb.cast(read(ce, x, w, pad=pad), work)))]

        if plan.dynamic_rows:  # the row chunks after the first, up to the run-time row count
            (acc,) = e.loop(rows - plan.tr, [acc], lambda ce, i, c: part(
                ce, replace(first, ro=i + plan.tr, vr=E.min_(rows - (i + plan.tr), plan.tr)), c), "bk", step=plan.tr)
        for start, count, valid in Plan(rows - plan.tr, cols, plan.tr, plan.tc).segments(0) if (
                not plan.dynamic_rows and rows > plan.tr) else ():
            (acc,) = e.loop(count, [acc], lambda ce, i, c, s=start, v=valid: part(
                ce, replace(first, ro=offset_of(plan.tr + s, i, plan.tr), vr=v), c), "bk")
        if scale is not None:
            acc = b.scalar("muls", acc, scale)
        acc = b.cast(acc, out.type.dtype)
        if len(out.type.shape) == 1:
            return [assemble(e, squeeze(e, acc, plan.tc, vc), carried[0], [co], first)]
        return [write(e, acc, carried[0], first, "col")]

    def columns(e: Emitter, li: tuple, carried: list) -> list:
        if plan.dynamic_cols:
            return e.loop(cols, carried, lambda ee, co, c: column_block(ee, co, E.min_(cols - co, plan.tc), c, li),
                          "bj", step=plan.tc)
        for start, count, valid in plan.segments(1):
            carried = e.loop(count, carried, lambda ee, j, c, s=start, v=valid: column_block(
                ee, offset_of(s, j, plan.tc), v, c, li), "bj")
        return carried

    return _over_lead(em, lead, [out], columns)[0]


def reduce_outer(em: Emitter, x: E.Var, out: E.Var, reduce: str, axis: int, scale: float | None,
                 span: object) -> E.Var:
    """``out`` (``x``'s shape with ``axis`` of extent 1) = ``reduce`` over ``axis``, an axis before the
    last two of an N-D ``x``: every block of the last two dims is the combination, element by element,
    of the ``x`` blocks at each index of ``axis`` (a loop over them carrying the partial tile)."""
    shape = dims(x.type)
    rows, cols = shape[-2:]
    extent = shape[axis]
    work = accumulator_dtype(x.type.dtype, reduce, (COMBINE[reduce], "muls"))
    plan = tiling.plan(rows, cols, [x.type.dtype, out.type.dtype, work], span=span)

    def block(e: Emitter, win: Window, carried: list) -> list:
        def tile_at(ee: Emitter, i: E.Expr) -> E.Var:
            w = replace(win, lead=win.lead[:axis] + (i,) + win.lead[axis + 1:])
            return Body(ee, w).cast(read(ee, x, w), work)

        def step(ee: Emitter, i: E.Expr, c: list) -> list:
            nxt = idx(i.value + 1) if isinstance(i, E.ConstInt) else i + 1
            return [combine(Body(ee, win), reduce, c[0], tile_at(ee, nxt))]

        acc = tile_at(e, idx(0))
        if not isinstance(extent, int) or extent > 1:  # a dynamic extent loops extent - 1 times at run time
            (acc,) = e.loop(extent - 1, [acc], step, "ra")
        b = Body(e, win)
        if scale is not None:
            acc = b.scalar("muls", acc, scale)
        return [write(e, b.cast(acc, out.type.dtype), carried[0], win)]

    return blocks(em, plan, [out], block, lead=tuple(dims(out.type)[:-2]))[0]


def reduce_nd(em: Emitter, x: E.Var, out: E.Var, reduce: str, axes: tuple, scale: float | None,
              span: object) -> E.Var:
    """An N-D ``x`` reduced over ``axes`` (not only the last): one axis at a time, the last first, each
    partial result (``keepdim``, in the compute dtype) in a GM workspace; ``scale`` (a mean's
    ``1 / count``) applies to the last step. Without ``keepdim`` the result is then copied into
    ``out`` with the reduced unit dims dropped (a reshape: one more pass through GM)."""
    shape = dims(x.type)
    rank = len(shape)
    final = out
    if len(out.type.shape) != rank:  # keepdim=False: into the kept shape, then its unit dims dropped
        if not isinstance(shape[-1], int) and rank - 1 not in axes:
            raise CompileError(f"{reduce} over axes {axes} of {shape_str(x.type.shape)} without keepdim: dropping the "
                               "reduced dims is a reshape, not tiled over a dynamic last axis; pass keepdim=True",
                               span)
        kept = tuple(idx(1) if a in axes else x.type.shape[a] for a in range(rank))
        out = em.workspace(TensorType(kept, out.type.dtype), "kept")
    work = accumulator_dtype(x.type.dtype, reduce, ("row_" + reduce, reduce, COMBINE[reduce], "muls"))
    cur, cur_shape = x, list(shape)
    order = sorted(axes, reverse=True)
    for n, a in enumerate(order):
        cur_shape[a] = 1
        last = n == len(order) - 1
        dest = out if last else em.workspace(TensorType(tuple(idx(d) if isinstance(d, int) else x.type.shape[i]
                                                              for i, d in enumerate(cur_shape)), work), f"part{a}")
        s = scale if last else None
        if a == rank - 1:
            cur = reduce_rows(em, cur, dest, reduce, s, span)
        elif a == rank - 2:
            cur = reduce_cols(em, cur, dest, reduce, s, span)
        else:
            cur = reduce_outer(em, cur, dest, reduce, a, s, span)
    return cur if final is out else reshape_into(em, cur, final, span)


def reduce_tensor(em: Emitter, x: E.Var, out: E.Var, reduce: str, axes: tuple, mean: bool, span: object) -> E.Var:
    rank = len(x.type.shape)
    if rank == 1:
        raise CompileError(f"{reduce} of a 1-D tensor leaves no dims: reduce a [1, n] view with keepdim=True", span)
    if not out.type.shape:
        raise CompileError(f"{reduce} over every axis leaves no dims: pass keepdim=True (kernels write tensors)", span)
    if axes == (rank - 1,):  # over the last axis: the other dims may be dynamic
        cols = grid_shape(x.type, f"{reduce} over the last axis")[-1]
        return reduce_rows(em, x, out, reduce, inverse(cols) if mean else None, span)
    shape = dims(x.type)  # a dynamic dim is looped over with run-time bounds, reduced or not
    count = 1
    for a in axes:
        count = shape[a] if isinstance(count, int) and count == 1 else count * shape[a]  # an Expr when dynamic
    scale = inverse(count) if mean else None
    if len(shape) > 2 and axes != (len(shape) - 1,):
        return reduce_nd(em, x, out, reduce, axes, scale, span)
    if axes == (0,):
        return reduce_cols(em, x, out, reduce, scale, span)
    if len(out.type.shape) != 2:
        raise CompileError(f"{reduce} over every axis leaves no dims: pass keepdim=True (kernels write tensors)", span)
    partial = DataType.FP32 if accumulator_dtype(x.type.dtype, reduce, ()) == DataType.FP32 else x.type.dtype
    cols = em.workspace(TensorType((idx(1), x.type.shape[1]), partial), "cols")
    cols = reduce_cols(em, x, cols, reduce, None, span)
    return reduce_rows(em, cols, out, reduce, scale, span)


def _reduction(name: str, reduce: str, mean: bool) -> None:
    @definition("tensor." + name)
    def define(em: Emitter, call: E.Call, out: E.Var) -> E.Var:
        x = call.args[0]
        axes = reduce_axes(call.op.name, len(x.type.shape), call.args[1] if len(call.args) > 1 else None, call.span)
        return reduce_tensor(em, x, out, reduce, axes, mean, call.span)


for _name, _reduce in (("sum", "sum"), ("max", "max"), ("min", "min")):
    _reduction(_name, _reduce, False)
_reduction("mean", "sum", True)


def _row_reduction(name: str, reduce: str) -> None:
    @definition("tensor." + name)
    def define(em: Emitter, call: E.Call, out: E.Var) -> E.Var:
        x = call.args[0]
        return reduce_tensor(em, x, out, reduce, (len(x.type.shape) - 1,), False, call.span)


_row_reduction("row_sum", "sum")
_row_reduction("row_max", "max")
