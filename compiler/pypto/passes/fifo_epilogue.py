"""A matmul followed by an element-wise epilogue, lowered as one group kernel (the C2V FIFO form).

``y = relu(x @ w + b)`` written in one kernel or ``pl.at`` region needs the cube for the product and a
vector core for the epilogue. SplitCubeVector's GM form runs them as two kernels with the product
stored to GM and loaded back. Where the epilogue is element-wise, this form keeps them in one *group
kernel* instead, as a pto-isa author writes it (``examples/matmul_c2v_epilogue.pto``):

* the cube section tiles the product as :class:`pypto.lib.matmul.MatmulEmitter` does, and pushes
  each finished ``bm x bn`` accumulator to the AIVs (``tpush_to_aiv``, split up/down: each AIV
  receives half of the block's rows);
* each AIV pops its half (a tile aliasing the FIFO slot, no copy), loads the epilogue's other operands
  for those rows (a bias row, a full tensor, scalars), runs the epilogue ops with the library's tile
  functions (:mod:`pypto.lib.elementwise`: the same dtypes and broadcasting as the tensor ops) and
  stores its rows of the result; the slot is freed after its last read (SplitSections).

The product never goes to GM. The C2V direction is an explicit pipe of ``C2V_SLOTS`` slots (the
default ring depth of ``pl.cross_core_slot``), each AIV keeping its half of a block; an accumulator
is capped so that an AIV's half is at most one tile of the library's shared plan
(:func:`pypto.lib.tiling.max_tile_bytes`) and the ring at most half of the UB (:data:`FIFO_SHARE`),
leaving the other half to the epilogue's tiles (on a2a3 the cap is rule 3's half of L0C anyway). A ragged block splits its
valid rows between the AIVs: the first takes up to half the block, the second the rest, and when
the rest is empty the second AIV pops and frees the slot without computing.

:func:`why_not` says why a kernel does not have this form (the split pass then keeps the GM form and
logs the reason): more than one matmul, a matmul operand computed in the kernel (that would take the
V2C direction), an op that is not element-wise (a reduction or composite needs whole rows or
columns of the product), an operand that does not broadcast to the product, a product that is
itself returned, or more than one returned result. A product whose dtype is not the accumulator's
(FP16 x FP16 -> FP16) is pushed as the accumulator and cast by each AIV after its pop.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from pypto.dtype import DataType
from pypto.enums import CAPACITY, MemorySpace, ParamDirection
from pypto.errors import CompileError
from pypto.ir import expr as E
from pypto.ir import stmt as St
from pypto.ir.types import ScalarType, TensorType, static_shape
from pypto.ir.visitor import stmt_list, walk
from pypto.lib import tiling
from pypto.lib.body import Body, work_dtype
from pypto.lib.elementwise import BINARY, SCALAR, UNARY, binary_tile, pow_tile, unary_tile
from pypto.lib.emit import Emitter, Window, kind
from pypto.lib.matmul import MatmulEmitter
from pypto.ops import block as B
from pypto.ops import fifo
from pypto.passes.base import NameAllocator
from pypto.passes.convert_tensor_to_block_ops import _without_tensor_aliases, rebound_output_params
from pypto.passes.ir_utils import all_names

CUBE_OP = "tensor.matmul"
# The FIFO's consumer ring (slots x one accumulator) takes at most 1 / FIFO_SHARE of the UB.
FIFO_SHARE = 2
SPLIT_ROWS = 1  # the AIVs share a pushed block by rows (up/down), the default
SPLIT_COLUMNS = 2  # pl.split(pl.SplitMode.LEFT_RIGHT): by columns
ELEMENTWISE = ({f"tensor.{n}" for n in UNARY} | {f"tensor.{n}" for n in BINARY} | {f"tensor.{n}" for n in SCALAR}
               | {"tensor.pow", "tensor.cast"})


def op_name(s: Any) -> str | None:
    if isinstance(s, St.AssignStmt) and isinstance(s.value, E.Call) and not isinstance(s.value.op, E.GlobalVar):
        return s.value.op.name
    return None


def short_name(name: str) -> str:
    return name.split(".", 1)[1].removesuffix("_scalar")


def returned_vars(stmts: list) -> list:
    rets = [s for s in stmts if isinstance(s, St.ReturnStmt)]
    return [v for v in (rets[-1].value if rets else ()) if isinstance(v, E.Var)]


def why_not(func: St.Function) -> str | None:
    """Why ``func`` (an InCore kernel mixing a tensor-level matmul with vector ops) is not a matmul
    with an element-wise epilogue that one group kernel runs (None when it is)."""
    stmts = _without_tensor_aliases(list(stmt_list(func.body)))
    mms = [s for s in stmts if op_name(s) == CUBE_OP]
    if len(mms) != 1:
        return f"it holds {len(mms)} matmuls (the FIFO form pushes the blocks of one product)"
    mm = mms[0]
    params = set(func.params)
    c = mm.value
    computed = [a.name for a in c.args if a not in params]
    if computed:
        return (f"the matmul reads '{computed[0]}', which the kernel computes (the cube loads its operands from GM; "
                "a vector result would need the V2C direction)")
    shape = static_shape(mm.var.type)
    if shape is None or len(shape) != 2:
        return "the product is not a static 2-D tensor"
    why = _why_not_epilogue(stmts, mm, params, shape)
    if why is not None:
        return why
    returned = returned_vars(stmts)
    if mm.var in returned:
        return "the product itself is returned (it would be stored from the cube as well)"
    if len(returned) != 1:
        return f"it returns {len(returned)} values (the FIFO form stores one epilogue result)"
    return None


def _why_not_epilogue(stmts: list, mm: St.AssignStmt, params: set, shape: list) -> str | None:
    """Why the statements beside the matmul are not an element-wise epilogue of its product."""
    known = set(params) | {mm.var}
    for s in stmts:
        if s is mm or isinstance(s, St.ReturnStmt):
            continue
        if isinstance(s, St.AssignStmt) and isinstance(s.var.type, ScalarType):
            if any(v is mm.var or (v not in params and isinstance(v.type, TensorType)) for v in walk(s.value)
                   if isinstance(v, E.Var)):
                return f"the scalar '{s.var.name}' reads a tensor"
            continue
        name = op_name(s)
        if name not in ELEMENTWISE:
            what = f"pl.{short_name(name)}" if name else type(s).__name__
            return (f"{what} (line {s.span.line}) is not element-wise: only element-wise epilogues run on each AIV's "
                    "rows of a pushed block")
        if static_shape(s.var.type) != shape:
            return f"the result of pl.{short_name(name)} (line {s.span.line}) is not the product's shape {list(shape)}"
        for a in s.value.args:
            if isinstance(getattr(a, "type", None), TensorType):
                if a not in known:
                    return f"'{a.name}' is not a kernel input or an epilogue value"
                if static_shape(a.type) is None or len(a.type.shape) > 2:
                    return f"'{a.name}' is not a static tensor of rank 1 or 2"
        known.add(s.var)
    return None


class _FifoMatmul(MatmulEmitter):
    """The product's cube loop nest, each block pushed to the AIVs and finished there by the epilogue."""

    def __init__(self, mm: St.AssignStmt, epilogue: list, result: E.Var, lane: E.Var, names: NameAllocator,
                 log: list | None, where: str, split: int = SPLIT_ROWS, slots: int = fifo.C2V_SLOTS):
        # an AIV's half of a block is at most one tile of the library's shared plan, and the C2V ring
        # (slots x half an accumulator per AIV) at most 1 / FIFO_SHARE of the UB
        ring = CAPACITY[MemorySpace.Vec] // FIFO_SHARE // slots * 2
        super().__init__(mm.value, names.fresh, mm.value.span, log, where,
                         acc_bytes=min(2 * tiling.max_tile_bytes(), ring))
        self.product = mm.var
        self.epilogue = epilogue
        self.result = result
        self.lane = lane
        self.names = names
        self.split = split

    def finish(self, acc: E.Var, offs: list, out_tensor: Any, stmts: list) -> E.Var:
        span = self.span
        split, axis = self.split, self.split - 1
        stmts.append(St.EvalStmt(fifo.push(fifo.C2V, acc, split, span), span))
        whole = [E.static_int(d) for d in acc.type.shape]
        valid = [E.static_int(d) for d in acc.type.valid_shape]
        n, vn = whole[axis], valid[axis]  # the split axis: its extent and valid extent
        half = n // 2
        lane = self.lane
        if vn == n:
            vh: Any = half
        elif vn > half:  # the first AIV has half the block, the second the rest
            vh = E.sub(E.ConstInt(half, DataType.INDEX), E.mul(lane, E.ConstInt(n - vn, DataType.INDEX)))
        else:  # the second AIV has no valid rows (columns): it pops and frees the slot only
            vh = E.mul(E.sub(E.ConstInt(1, DataType.INDEX), lane), E.ConstInt(vn, DataType.INDEX))
        shape, lane_valid = list(whole), list(valid)
        shape[axis], lane_valid[axis] = half, vh
        call = fifo.pop(fifo.C2V, shape, lane_valid, acc.type.dtype, split, span)
        popped = E.Var(self.names.fresh(f"{self.product.name}_half"), call.type, span)
        stmts.append(St.AssignStmt(popped, call, span))
        lane_offs = list(offs[:2])
        lane_offs[axis] = E.add(offs[axis], E.mul(lane, E.ConstInt(half, DataType.INDEX)))
        if vn > half:
            return self.rows(popped, Window(*lane_offs, *lane_valid, *shape), out_tensor, stmts)
        # ragged block within the first AIV's half: only it computes (its rows/columns are all of them)
        then: list = []
        win = Window(*lane_offs, *valid, *shape)
        view = E.Var(self.names.fresh(f"{self.product.name}_rows"), replace(
            call.type, tile_view=replace(call.type.view, valid_shape=tuple(E.ConstInt(v, DataType.INDEX)
                                                                           for v in valid))), span)
        then.append(St.AssignStmt(view, popped, span))
        stored = self.rows(view, win, out_tensor, then)
        after = E.Var(self.names.fresh(f"{out_tensor.name}_if"), out_tensor.type, span)
        first = E.eq(lane, E.ConstInt(0, DataType.INDEX))
        stmts.append(St.IfStmt(first, St.SeqStmts(tuple(then + [St.YieldStmt((stored,), span)]), span),
                               St.SeqStmts((St.YieldStmt((out_tensor,), span),), span), (after,), span))
        return after

    def rows(self, popped: E.Var, win: Window, out_tensor: Any, stmts: list) -> E.Var:
        """The epilogue over one AIV's rows ``win`` of a block (``popped``: its rows of the product)."""
        em = Emitter(self.names, self.span, no_workspace)
        body = Body(em, win)
        out_shape = tuple(static_shape(self.product.type))
        # the FIFO carries the accumulator; a product of another dtype (an FP16 product of FP16
        # operands) is the accumulator rounded once, here on the AIV, as the cube's store would
        tiles: dict = {self.product: body.cast(popped, self.product.type.dtype)}

        def tile_of(x: Any) -> E.Var:
            if x not in tiles:
                tiles[x] = load_operand(em, x, win, kind(x, out_shape))
            return tiles[x]

        for s in self.epilogue:
            tiles[s.var] = apply_op(body, s, tile_of, out_shape)
        stored = em.let(f"{out_tensor.name}_st", B.store(tiles[self.result], [win.ro, win.co], out_tensor,
                                                          span=self.span))
        stmts += em.stmts
        return stored


def no_workspace(t: TensorType, base: str) -> E.Var:
    raise CompileError("internal: a FIFO epilogue op asked for a GM workspace")


def load_operand(em: Emitter, x: E.Var, win: Window, k: str) -> E.Var:
    """Operand ``x``'s tile for the rows of ``win`` (``k``: how it broadcasts against the product)."""
    rank = len(x.type.shape)
    zero = E.ConstInt(0, DataType.INDEX)
    if rank == 1:
        offs, shape, valid = ([zero], [1], [1]) if k == "one" else ([win.co], [win.tc], [win.vc])
    elif k == "row":
        offs, shape, valid = [win.ro, zero], [win.tr, 1], [win.vr, 1]
    elif k == "col":
        offs, shape, valid = [zero, win.co], [1, win.tc], [1, win.vc]
    elif k == "one":
        offs, shape, valid = [zero, zero], [1, 1], [1, 1]
    else:
        offs, shape, valid = [win.ro, win.co], [win.tr, win.tc], [win.vr, win.vc]
    return em.let(f"{x.name}_t", B.load(x, offs, shape, valid, MemorySpace.Vec, span=em.span), tuple(valid))


def apply_op(b: Body, s: St.AssignStmt, tile_of: Any, out_shape: tuple) -> E.Var:
    """One epilogue op on tiles, by the library's tile functions."""
    c = s.value
    name = short_name(c.op.name) if not c.op.name.endswith("_scalar") else c.op.name.split(".", 1)[1]
    dtype = s.var.type.dtype
    if name in UNARY:
        return unary_tile(b, name, tile_of(c.args[0]), dtype)
    if name in BINARY:
        x, y = c.args
        return binary_tile(b, name, tile_of(x), tile_of(y), (kind(x, out_shape), kind(y, out_shape)), dtype)
    if name in SCALAR:
        work = work_dtype(dtype, (SCALAR[name],), c.span)
        return b.cast(b.scalar(SCALAR[name], b.cast(tile_of(c.args[0]), work), c.args[1]), dtype)
    if name == "pow":
        n = E.static_int(c.args[1])
        work = work_dtype(dtype, ("mul", "recip") if n < 0 else ("mul",), c.span)
        return b.cast(pow_tile(b, b.cast(tile_of(c.args[0]), work), n), dtype)
    if name == "cast":
        t = tile_of(c.args[0])
        return t if t.type.dtype is dtype else b.op("cast", t, dtype, c.kwargs.get("mode", 2))
    raise CompileError(f"internal: {c.op.name} is not an epilogue op", s.span)


def lower(func: St.Function, log: list | None = None, written: St.Function | None = None) -> tuple[St.Function, list]:
    """``func`` (:func:`why_not` is None) as a group kernel, and the Out parameters it gained (the
    caller allocates them). ``written``: the kernel as written, whose aliases (``y = t`` of an Out
    parameter ``y``) say where the result goes."""
    names = NameAllocator(all_names(func))
    stmts = _without_tensor_aliases(list(stmt_list(func.body)))
    mm = next(s for s in stmts if op_name(s) == CUBE_OP)
    epilogue = [s for s in stmts if op_name(s) in ELEMENTWISE]
    scalars = [s for s in stmts if s is not mm and s not in epilogue and not isinstance(s, St.ReturnStmt)]
    ret = next(s for s in reversed(stmts) if isinstance(s, St.ReturnStmt))
    (result,) = returned_vars(stmts)
    added: list = []
    out = rebound_output_params(written or func, [result]).get(result)
    if out is None:
        out = E.Var(names.fresh("out_0"), result.type, result.span)
        added.append(out)
    span = mm.span
    lane = E.Var(names.fresh("lane"), ScalarType(DataType.INDEX), span)
    body = list(scalars) + [St.AssignStmt(lane, B.get_subblock_idx(span=span), span)]
    split = SPLIT_COLUMNS if func.split_mode == "LEFT_RIGHT" else SPLIT_ROWS
    emitter = _FifoMatmul(mm, epilogue, result, lane, names, log, func.name, split, func.slot_num or fifo.C2V_SLOTS)
    nest, final = emitter.emit(out)
    body += nest
    body.append(replace(ret, value=tuple(final if v is result else v for v in ret.value)))
    params = tuple(func.params) + tuple(added)
    dirs = tuple(func.param_directions) + (ParamDirection.Out,) * len(added)
    return replace(func, params=params, param_directions=dirs,
                   body=St.SeqStmts(tuple(body), getattr(func.body, "span", E.UNKNOWN_SPAN))), added

