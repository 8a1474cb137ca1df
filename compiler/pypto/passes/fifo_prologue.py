"""A matmul whose left operand is computed by element-wise ops, lowered as one group kernel (the V2C
FIFO form).

``y = exp(x) @ w`` written in one kernel or ``pl.at`` region needs a vector core for ``exp`` and the
cube for the product. SplitCubeVector's GM form stores ``exp(x)`` to GM and loads it back in a second
kernel. Here the two AIVs compute the operand chunk by chunk and push it to the cube through the V2C
FIFO, as a pto-isa author writes it (``examples/v2c_scale_matmul.pto``):

* the cube section tiles the product as :class:`pypto.lib.matmul.MatmulEmitter` does, except that
  each ``bm x bk`` chunk of the left operand is popped from the V2C FIFO into L1 (a Mat tile aliasing
  the slot) instead of loaded from GM; the rest (moves to L0, the K loop in L0C, the store of each
  block) is the ordinary matmul;
* for each chunk the cube pops, each AIV loads its half of the rows of the chain's inputs, runs the
  element-wise ops with the library's tile functions (:mod:`pypto.lib.elementwise`), sets the padding
  of a ragged chunk to zero (the cube multiplies whole fractal boxes: padding must add nothing, as a
  zero-filled GM load's does) and pushes its half (split up/down). An AIV with no valid rows in a
  ragged chunk pushes zeros, so that the cube's pop always joins two halves.

A chunk read by several N blocks is recomputed for each (unless the matmul keeps A's row panel in L1,
rule 7, which needs every chunk of the panel popped at once: kept only while the panel has no more
chunks than the FIFO has slots). :func:`why_not` says why a kernel does not have this form.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from pypto.dtype import DataType
from pypto.enums import ParamDirection
from pypto.errors import CompileError
from pypto.ir import expr as E
from pypto.ir import stmt as St
from pypto.ir.types import ScalarType, TensorType, static_shape
from pypto.ir.visitor import stmt_list, walk
from pypto.lib.body import Body
from pypto.lib.emit import Emitter, Window, kind
from pypto.lib.matmul import MatmulEmitter
from pypto.ops import block as B
from pypto.ops import fifo
from pypto.passes.base import NameAllocator
from pypto.passes.convert_tensor_to_block_ops import _without_tensor_aliases, rebound_output_params
from pypto.passes.fifo_epilogue import (
    CUBE_OP,
    ELEMENTWISE,
    apply_op,
    load_operand,
    no_workspace,
    op_name,
    returned_vars,
    short_name,
)
from pypto.passes.ir_utils import all_names

SPLIT_ROWS = 1  # the AIVs share a chunk by rows (up/down)


def why_not(func: St.Function) -> str | None:
    """Why ``func`` is not a matmul whose left operand element-wise ops compute from the kernel's
    inputs, one group kernel runs (None when it is)."""
    stmts = _without_tensor_aliases(list(stmt_list(func.body)))
    mms = [s for s in stmts if op_name(s) == CUBE_OP]
    if len(mms) != 1:
        return f"it holds {len(mms)} matmuls"
    mm = mms[0]
    params = set(func.params)
    a, b = mm.value.args
    if b not in params:
        return f"the matmul's right operand '{b.name}' is computed (the V2C form computes the left one)"
    if a in params:
        return "the vector ops do not compute the matmul's left operand"
    if mm.value.kwargs.get("a_trans"):
        return "the computed operand is read transposed"
    shape = static_shape(a.type)
    if shape is None or len(shape) != 2 or len(static_shape(mm.var.type) or ()) != 2:
        return "the operand or the product is not a static 2-D tensor"
    known = set(params)
    for s in stmts:
        if s is mm or isinstance(s, St.ReturnStmt):
            continue
        if isinstance(s, St.AssignStmt) and isinstance(s.var.type, ScalarType):
            if any(isinstance(v, E.Var) and isinstance(v.type, TensorType) and v not in params for v in walk(s.value)):
                return f"the scalar '{s.var.name}' reads a tensor the kernel computes"
            continue
        name = op_name(s)
        if name not in ELEMENTWISE:
            what = f"pl.{short_name(name)}" if name else type(s).__name__
            return f"{what} (line {s.span.line}) is not element-wise"
        if static_shape(s.var.type) != shape:
            return f"the result of pl.{short_name(name)} (line {s.span.line}) is not the operand's shape {list(shape)}"
        for x in s.value.args:
            if isinstance(getattr(x, "type", None), TensorType) and (x not in known or len(x.type.shape) > 2):
                return f"'{x.name}' is not a kernel input or an earlier value of the operand's ops"
        known.add(s.var)
    readers = [s for s in stmts if s is not mm and any(v is a for v in walk(s) if isinstance(v, E.Var))
               and not (isinstance(s, St.AssignStmt) and s.var is a)]
    if readers or returned_vars(stmts) != [mm.var]:
        return "the computed operand is read by more than the matmul, or the kernel returns more than the product"
    return None


class _PrologueMatmul(MatmulEmitter):
    """The product's cube loop nest, each chunk of the left operand computed by the AIVs and popped."""

    def __init__(self, mm: St.AssignStmt, prologue: list, lane: E.Var, names: NameAllocator, log: list | None,
                 where: str):
        super().__init__(mm.value, names.fresh, mm.value.span, log, where)
        if self.tiling.a_panel and len(self.k_chunks()) > fifo.fifo_slots(False):
            # a panel pops all its chunks before the first is freed: more than the slots would deadlock
            self.tiling = replace(self.tiling, a_panel=False)
        self.prologue = prologue
        self.operand = mm.value.args[0]
        self.lane = lane
        self.names = names

    def mat(self, x: Any, trans: bool, batch_offs: list, rows: tuple, cols: tuple, out: list) -> E.Var:
        if x is not self.operand:
            return super().mat(x, trans, batch_offs, rows, cols, out)
        (ro, rs), (co, cs) = rows, cols
        span, lane = self.span, self.lane
        half, vm = rs.tile // 2, rs.valid
        dtype = self.operand.type.dtype
        if vm > half:  # both AIVs have rows (the second the rest of a ragged chunk)
            vr: Any = half if vm == rs.tile else E.sub(_idx(half), E.mul(lane, _idx(rs.tile - vm)))
            self.push_half(Window(E.add(ro, E.mul(lane, _idx(half))), co, vr, cs.valid, half, cs.tile),
                           vm < rs.tile or cs.valid < cs.tile, out)
        else:  # the second AIV has no rows: it pushes zeros, so that the cube pops two halves
            then: list = []
            self.push_half(Window(ro, co, vm, cs.valid, half, cs.tile), True, then)
            zeros = E.Var(self.names.fresh(f"{self.operand.name}_zeros"),
                          B.full([half, cs.tile], dtype, 0, span=span).type, span)
            other = [St.AssignStmt(zeros, B.full([half, cs.tile], dtype, 0, span=span), span),
                     St.EvalStmt(fifo.push(fifo.V2C, zeros, SPLIT_ROWS, span), span)]
            out.append(St.IfStmt(E.eq(lane, _idx(0)), St.SeqStmts(tuple(then), span),
                                 St.SeqStmts(tuple(other), span), (), span))
        call = fifo.pop(fifo.V2C, [rs.tile, cs.tile], [vm, cs.valid], dtype, SPLIT_ROWS, span)
        popped = E.Var(self.names.fresh(f"{self.operand.name}_mat"), call.type, span)
        out.append(St.AssignStmt(popped, call, span))
        return popped

    def push_half(self, win: Window, ragged: bool, out: list) -> None:
        """One AIV's rows ``win`` of an operand chunk, computed and pushed (padding zeroed if ``ragged``)."""
        em = Emitter(self.names, self.span, no_workspace)
        body = Body(em, win)
        shape = tuple(static_shape(self.operand.type))
        tiles: dict = {}

        def tile_of(x: Any) -> E.Var:
            if x not in tiles:
                tiles[x] = load_operand(em, x, win, kind(x, shape))
            return tiles[x]

        for s in self.prologue:
            tiles[s.var] = apply_op(body, s, tile_of, shape)
        t = tiles[self.operand]
        if ragged:
            t = em.let(f"{self.operand.name}_padded", B.fillpad(t, "zero", span=self.span))
        out += em.stmts
        out.append(St.EvalStmt(fifo.push(fifo.V2C, t, SPLIT_ROWS, self.span), self.span))


def _idx(v: int) -> E.ConstInt:
    return E.ConstInt(v, DataType.INDEX)


def lower(func: St.Function, log: list | None = None, written: St.Function | None = None) -> tuple[St.Function, list]:
    """``func`` (:func:`why_not` is None) as a group kernel, and the Out parameters it gained."""
    if func.split_mode == "LEFT_RIGHT":
        raise CompileError(f"pl.split(pl.SplitMode.LEFT_RIGHT) of '{func.name}': its matmul's left operand is computed "
                           "by the AIVs chunk by chunk, each AIV taking half of a chunk's rows; a split by columns "
                           "(half of each chunk's K) is not implemented: use UP_DOWN", func.span)
    names = NameAllocator(all_names(func))
    stmts = _without_tensor_aliases(list(stmt_list(func.body)))
    mm = next(s for s in stmts if op_name(s) == CUBE_OP)
    prologue = [s for s in stmts if op_name(s) in ELEMENTWISE]
    scalars = [s for s in stmts if s is not mm and s not in prologue and not isinstance(s, St.ReturnStmt)]
    ret = next(s for s in reversed(stmts) if isinstance(s, St.ReturnStmt))
    added: list = []
    out = rebound_output_params(written or func, [mm.var]).get(mm.var)
    if out is None:
        out = E.Var(names.fresh("out_0"), mm.var.type, mm.var.span)
        added.append(out)
    lane = E.Var(names.fresh("lane"), ScalarType(DataType.INDEX), mm.span)
    body = list(scalars) + [St.AssignStmt(lane, B.get_subblock_idx(span=mm.span), mm.span)]
    nest, final = _PrologueMatmul(mm, prologue, lane, names, log, func.name).emit(out)
    body += nest
    body.append(replace(ret, value=tuple(final if v is mm.var else v for v in ret.value)))
    params = tuple(func.params) + tuple(added)
    dirs = tuple(func.param_directions) + (ParamDirection.Out,) * len(added)
    return replace(func, params=params, param_directions=dirs,
                   body=St.SeqStmts(tuple(body), getattr(func.body, "span", E.UNKNOWN_SPAN))), added

