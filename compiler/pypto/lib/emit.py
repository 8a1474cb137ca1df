"""Building library IR: statements, SSA loops over blocks, and the windows a block reads and writes.

A library definition receives an :class:`Emitter` and appends PyPTO IR to it: ``let`` binds a call
to a fresh variable, ``loop`` builds a ``for`` whose loop-carried values (the output tensor being
assembled, a running reduction tile) are SSA iter args, and ``blocks`` runs a body once per block of
a :class:`~pypto.lib.tiling.Plan` (a loop over the full blocks, then the tail block peeled with its
own static valid shape). A block reads its operands with :func:`read` (``cast_tensor_to_tile`` of
the operand's window, broadcasting vectors and scalars NumPy's way) and writes its result with
:func:`write` (``cast_tile_to_tensor`` + ``tensor.assemble`` into the output).

Dynamic shapes: any dim of an element-wise op, a reduction or a row composite may be a ``pl.dynamic``
variable (a kernel argument). The leading dims are then loops with a run-time trip count, the rows one
loop ``range(0, rows, tr)`` whose blocks have the run-time valid row count ``min(rows - offset, tr)``
(TLOAD/TSTORE of ``?`` rows), and a run-time last axis one loop ``range(0, cols, tc)`` over column
chunks with valid columns ``min(cols - offset, tc)`` (the tile's width is static: the capacity rule of
:mod:`pypto.lib.tiling`). Matmul and the layout ops stay static; :func:`shape2` refuses them by name
(:data:`DYNAMIC_SUPPORT`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from pypto.dtype import DataType
from pypto.enums import TilePad
from pypto.errors import CompileError, Span
from pypto.ir import expr as E
from pypto.ir import stmt as St
from pypto.ir.expr import static_int
from pypto.ir.types import ScalarType, TensorType, TileType, shape_str, static_shape
from pypto.lib import ops as L
from pypto.lib.tiling import Plan
from pypto.ops import block as B
from pypto.ops import tensor as T

if TYPE_CHECKING:
    from pypto.passes.base import NameAllocator


# ForStmt.loop_origin of a library loop over the blocks of a plan (chunk_loops uses 1-3, expand_power2 4-5)
GRID_LOOP = 6


def idx(v: int) -> E.ConstInt:
    return E.ConstInt(v, DataType.INDEX)


class Emitter:
    """An append-only statement list plus the function's name allocator and a workspace factory.

    ``workspace(type, base)`` returns a GM tensor the definition may write and read back (an
    intermediate that does not stay on chip); the expansion pass turns it into an ``Out`` parameter
    the caller allocates. ``inputs`` are the kernel's read-only tensor arguments.
    """

    def __init__(self, names: NameAllocator, span: Span, workspace: Callable[[TensorType, str], E.Var],
                 inputs: frozenset = frozenset()):
        self.names = names
        self.span = span
        self.workspace = workspace
        # the kernel's read-only tensor arguments: their GM bytes may be viewed with another shape
        # (tensor.as_shape), nothing in the kernel writes them
        self.inputs = inputs
        self.stmts: list = []

    def child(self) -> Emitter:
        return Emitter(self.names, self.span, self.workspace, self.inputs)

    def let(self, base: str, call: E.Expr, valid: tuple | None = None) -> E.Var:
        """Bind ``call`` to a fresh variable; a tile result gets ``valid`` as its valid shape."""
        t = call.type
        if valid is not None and isinstance(t, TileType):
            t = replace(t, tile_view=replace(t.view, valid_shape=tuple(idx(v) if isinstance(v, int) else v
                                                                         for v in valid)))
        v = E.Var(self.names.fresh(base), t, self.span)
        self.stmts.append(St.AssignStmt(v, call, self.span))
        return v

    def loop(self, count: int | E.Expr, carried: list, body: Callable[[Emitter, E.Expr, list], list],
             name: str = "i", grid: bool = False, step: int = 1) -> list:
        """``for i in range(0, count, step)`` carrying ``carried``; ``body(em, i, iters)`` returns the
        next values. ``count`` may be a run-time expression (a dynamic dim).

        A single iteration is emitted inline with ``i = 0`` (no loop), except for a ``grid`` loop: a
        loop over the blocks of a plan, marked :data:`GRID_LOOP` and kept even for one block, so that
        every library op over the same plan has the same loop structure for FuseLoops to match (which
        inlines the one-block loops afterwards)."""
        if isinstance(count, int) and count == step and not grid:
            return list(body(self, idx(0), list(carried)))
        lv = E.Var(self.names.fresh(name), ScalarType(DataType.INDEX), self.span)
        iters = [E.IterArg(self.names.fresh(f"{c.name}_it"), c.type, self.span, c) for c in carried]
        inner = self.child()
        new = list(body(inner, lv, list(iters)))
        stmts = inner.stmts + ([St.YieldStmt(tuple(new), self.span)] if carried else [])
        rvs = [E.Var(self.names.fresh(f"{c.name}_rv"), c.type, self.span) for c in carried]
        stop = idx(count) if isinstance(count, int) else count
        self.stmts.append(St.ForStmt(lv, idx(0), stop, idx(step), tuple(iters), St.SeqStmts(tuple(stmts), self.span),
                                     tuple(rvs), self.span, loop_origin=GRID_LOOP if grid else 0))
        return rvs


@dataclass(frozen=True)
class Window:
    """One block of a plan: offsets (expressions) and valid extents of rows and columns, and the
    tile shape ``[tr, tc]`` shared by every block of the plan; ``rank1`` when the data is a vector;
    ``lead`` the indices of the leading dims of an N-D result (the block is one ``[rows, cols]`` slice)."""

    ro: Any
    co: Any
    vr: int
    vc: int
    tr: int
    tc: int
    rank1: bool = False
    lead: tuple = ()

    @property
    def valid(self) -> tuple:
        return (self.vc,) if self.rank1 else (self.vr, self.vc)

    @property
    def row_valid(self) -> tuple:
        return (self.vr, 1)


def offset_of(start: int, i: E.Expr, size: int) -> E.Expr:
    if isinstance(i, E.ConstInt):
        return idx(start + i.value * size)
    e = i * size if size != 1 else i
    return e + start if start else e


def blocks(em: Emitter, plan: Plan, carried: list, body: Callable[[Emitter, Window, list], list],
           rank1: bool = False, cols: bool = True, lead: tuple = ()) -> list:
    """Run ``body(em, window, carried) -> carried`` over every block of ``plan``.

    One loop per piece of each axis (the run of full blocks, the tail): the loops over ``lead`` (the
    extents of an N-D result's leading dims) outermost, then the row pieces, each holding the column
    pieces. Every loop is a :data:`GRID_LOOP`, kept even for one block: every op over the same plan
    emits the same loops, which FuseLoops pairs piece by piece. Where a block holds whole rows there
    is no column loop (an element-wise op then has the loops of a row reduction or composite).

    With ``cols=False`` the body runs once per row block with ``co = 0`` and ``vc = cols`` whatever
    the plan (it walks the columns itself: the two-level loop of the row reductions and composites)."""
    whole_rows = not cols or not plan.chunked

    def row(e: Emitter, ro: E.Expr, rv: Any, li: tuple, c: list) -> list:
        if whole_rows:
            return body(e, Window(ro, idx(0), rv, plan.cols, plan.tr, plan.tc, rank1, li), c)
        if plan.dynamic_cols:  # one loop over the column offsets up to the run-time width
            return e.loop(plan.cols, c, lambda e3, co, c3: body(
                e3, Window(ro, co, rv, E.min_(plan.cols - co, plan.tc), plan.tr, plan.tc, rank1, li), c3),
                "bj", grid=True, step=plan.tc)
        for cs, ccount, cvalid in plan.segments(1):
            c = e.loop(ccount, c, lambda e3, j, c3, cs=cs, cv=cvalid: body(
                e3, Window(ro, offset_of(cs, j, plan.tc), rv, cv, plan.tr, plan.tc, rank1, li), c3), "bj", grid=True)
        return c

    def grid(e: Emitter, li: tuple, c: list) -> list:
        if plan.dynamic_rows:
            # one loop over the row offsets up to the run-time row count; a block's valid rows are
            # min(rows - offset, tr) (the last block is the tail)
            return e.loop(plan.rows, c, lambda e2, r, c2: row(e2, r, E.min_(plan.rows - r, plan.tr), li, c2),
                          "bi", grid=True, step=plan.tr)
        for rs, rcount, rvalid in plan.segments(0):
            c = e.loop(rcount, c, lambda e2, i, c2, rs=rs, rv=rvalid: row(e2, offset_of(rs, i, plan.tr), rv, li, c2),
                       "bi", grid=True)
        return c

    return _nest(em, lead, (), carried, grid)


def _nest(em: Emitter, lead: tuple, indices: tuple, carried: list,
          leaf: Callable[[Emitter, tuple, list], list]) -> list:
    """``leaf(em, indices, carried)`` inside one grid loop per extent of ``lead``."""
    if not lead:
        return leaf(em, indices, carried)
    return em.loop(lead[0], carried, lambda e, i, c: _nest(e, lead[1:], (*indices, i), c, leaf), "li", grid=True)


def chunks(em: Emitter, plan: Plan, win: Window, carried: list, body: Callable[[Emitter, Window, list], list]) -> list:
    """The output pass of a two-level loop: ``body`` over the column chunks of row block ``win``, as the
    grid loops an element-wise op over the same plan runs inside its row block (so that FuseLoops can
    fuse a following element-wise op into this pass, the statistics before it staying in front)."""
    if plan.dynamic_cols:
        return em.loop(plan.cols, carried, lambda e, co, c: body(
            e, replace(win, co=co, vc=E.min_(plan.cols - co, plan.tc)), c), "bj", grid=True, step=plan.tc)
    for start, count, valid in plan.segments(1):
        carried = em.loop(count, carried, lambda e, j, c, s=start, v=valid: body(
            e, replace(win, co=offset_of(s, j, plan.tc), vc=v), c), "bj", grid=True)
    return carried


# ----------------------------------------------------------------------------- operand windows


# What is tiled over a dynamic (run-time) dim, said by every refusal.
DYNAMIC_SUPPORT = ("dynamic dims (the last axis too) are tiled for element-wise ops, reductions over any axes, "
                   "softmax, log_softmax, rms_norm, layer_norm, swiglu, transpose, slice, broadcast_to and concat "
                   "(along a static axis), for reshape with a static last axis, and for matmul on a dynamic M "
                   "(N, K and batch dims static, A not transposed)")


def shape2(t: TensorType, what: str = "this library op") -> tuple[int, ...]:
    """The static shape of ``t``; a dynamic dim is refused with what is supported instead."""
    s = static_shape(t)
    if s is None:
        raise CompileError(f"{what} needs static shapes (got {shape_str(t.shape)}): {DYNAMIC_SUPPORT}")
    return tuple(s)


def dims(t: TensorType) -> tuple:
    """``t``'s dims: ints where static, the run-time expression (a ``pl.dynamic`` dim) otherwise."""
    return tuple(static_int(d) if static_int(d) is not None else d for d in t.shape)


def inverse(n: int | E.Expr) -> float | E.Expr:
    """``1 / n`` for an element count (a mean's scale): a constant, or for a dynamic dim the run-time
    FP32 scalar ``1.0 / float(n)``."""
    if isinstance(n, int):
        return 1.0 / n
    return E.truediv(E.ConstFloat(1.0, DataType.FP32), E.cast(n, DataType.FP32))


def grid_shape(t: TensorType, what: str) -> tuple:
    """``t``'s dims for a row-blocked grid: any dim may be dynamic (a dynamic last axis is walked in
    column chunks with run-time valid columns)."""
    return dims(t)


def kind(x: Any, out_shape: tuple) -> str:
    """How operand ``x`` broadcasts against a 2-D (or 1-D) result: 'full', 'row' ([R, 1]),
    'col' ([1, C] or [C]), 'one' ([1, 1] or [1])."""
    s = dims(x.type)
    if len(s) == 1:  # a vector is one row: a 1-D window of it, whatever the result's rank
        if s[0] == 1 and out_shape[-1] != 1:
            return "one"
        return "col" if len(out_shape) == 2 and out_shape[0] != 1 else "full"
    r, c = s[-2:]
    if c == 1 and out_shape[1] != 1:
        return "one" if r == 1 and out_shape[0] != 1 else "row"
    if r == 1 and out_shape[0] != 1:
        return "col"
    return "full"


def _lead_offsets(x: E.Var, win: Window, trailing: int = 2) -> list:
    """The offsets of N-D operand ``x``'s dims before its ``trailing`` ones in block ``win`` (0 where
    ``x`` broadcasts)."""
    s = dims(x.type)[:-trailing]
    lead = win.lead[len(win.lead) - len(s):] if s else ()
    return [idx(0) if d == 1 else i for d, i in zip(s, lead, strict=True)]


def read(em: Emitter, x: E.Var, win: Window, k: str = "full", pad: TilePad = TilePad.null) -> E.Var:
    """The tile of operand ``x`` (of broadcast kind ``k``) that block ``win`` reads; an N-D operand's
    ``[1, .., 1, tr, tc]`` window is re-viewed as the ``[tr, tc]`` tile it is (no data moves)."""
    rank = len(x.type.shape)
    if rank == 1:
        offs, sizes, valid = ([idx(0)], [1], [1]) if k == "one" else ([win.co], [win.tc], [win.vc])
    elif k == "row":
        offs, sizes, valid = [win.ro, idx(0)], [win.tr, 1], [win.vr, 1]
    elif k == "col":
        offs, sizes, valid = [idx(0), win.co], [1, win.tc], [1, win.vc]
    elif k == "one":
        offs, sizes, valid = [idx(0), idx(0)], [1, 1], [1, 1]
    else:
        offs, sizes, valid = [win.ro, win.co], [win.tr, win.tc], [win.vr, win.vc]
    if pad is not TilePad.null and all(not isinstance(v, int) or v == n for v, n in zip(valid, sizes, strict=True)):
        # a full window has no padding to fill; a run-time valid row count pads no column a row-wise
        # consumer reads (reductions across a dynamic dim are not tiled)
        pad = TilePad.null
    if rank <= 2:
        return em.let(f"{x.name}_t", L.cast_tensor_to_tile(x, offs, sizes, valid, pad, span=em.span))
    ones = [1] * (rank - 2)
    t = em.let(f"{x.name}_nd", L.cast_tensor_to_tile(x, _lead_offsets(x, win) + offs, ones + sizes, ones + valid,
                                                    pad, span=em.span))
    return em.let(f"{x.name}_t", B.reshape(t, sizes, span=em.span), tuple(valid))


def write(em: Emitter, tile: E.Var, out: E.Var, win: Window, k: str = "full") -> E.Var:
    """``out`` with ``tile`` (the block's valid region) assembled at the block's window."""
    rank = len(out.type.shape)
    if rank == 1:
        offs = [win.co]
    elif k == "row":
        offs = [win.ro, idx(0)]
    elif k == "col":
        offs = [idx(0), win.co]
    else:
        offs = [win.ro, win.co]
    return assemble(em, tile, out, offs, win)


def assemble(em: Emitter, tile: E.Var, out: E.Var, offs: list, win: Window) -> E.Var:
    """``out`` with ``tile`` assembled at ``offs`` of its trailing dims (and the block's leading indices)."""
    lead = _lead_offsets(out, win, len(offs)) if len(out.type.shape) > len(offs) else []
    view = em.let(f"{tile.name}_v", L.cast_tile_to_tensor(tile, rank=len(lead) + len(offs), span=em.span))
    return em.let(out.name.split("_it")[0], T.assemble(out, view, lead + offs, span=em.span))
