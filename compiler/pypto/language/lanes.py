"""Halved lane regions: ``for lane in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN | LEFT_RIGHT):``
(spec pypto-jit §4.5), with ``pl.aiv_shard(x)`` and ``pl.aic_gather(x)``.

In a split mode each of the two AIVs of the core group processes half of every vector tile of the
region: the top and bottom halves of the rows (UP_DOWN) or the left and right halves of the columns
(LEFT_RIGHT). The user writes the region for whole tiles; the region's body is parsed as written and
then rewritten here for one lane, ``lane`` being the AIV running it (0 or 1):

* a load reads the lane's half of its window (half the extent, the offset moved by ``lane * half``),
  a new tile (``pl.create_tile``, ``pl.full``) is allocated at half size, and a store writes the
  lane's half of the window it names;
* every other op is rebuilt on the halved operands, so its result type follows from them. An extent
  of 1 along the split axis is a broadcast vector and is not halved (an ``[R, 1]`` row vector under
  LEFT_RIGHT, a ``[1, C]`` one under UP_DOWN);
* what cannot be halved is a located error, never a silent whole-tile computation: an odd extent,
  a reduction along the split axis (its halves would be partial results), an op that takes a shape
  or an element index (reshape, slice, element reads and writes), a cube op, a load whose valid
  region is narrower than its window along the split axis, and a tensor-level op.

``pl.aiv_shard(x)`` reads a value defined outside the region as the lane's half of it (in NONE mode
it is ``x``). ``pl.aic_gather(x)`` joins the lanes' halves of a region value back for the cube (in
NONE mode it is ``x``); the halves live in the two AIVs, so they are pushed through the V2C FIFO and
the cube pops them joined: the kernel becomes a group kernel (cube section and vector section,
:mod:`pypto.ops.fifo`). Functionally this is the spec's "run the body once per lane, with the lane's half of each
halved tile"; the kernel runs on both AIVs of the group (the vector section of a group kernel).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field, replace
from typing import Any

from pypto.dtype import DataType
from pypto.enums import MemorySpace
from pypto.errors import PyptoTypeError
from pypto.ir import expr as E
from pypto.ir import stmt as St
from pypto.ir.registry import create_op_call
from pypto.ir.types import TileType, static_int
from pypto.ir.visitor import substitute
from pypto.language.optimizations import SplitMode
from pypto.ops import block as B
from pypto.ops import fifo
from pypto.ops import tile_data as D

_AXIS = {SplitMode.UP_DOWN: 0, SplitMode.LEFT_RIGHT: 1}
_ALLOCATIONS = ("block.create_tile", "block.full")
_CUBE_OPS = ("block.matmul", "block.gemv")


@dataclass
class LaneSplit:
    """The split region being parsed: its mode, the split axis, the lane variable, and the values
    ``pl.aiv_shard`` already halved (the rewrite leaves them as they are)."""

    mode: SplitMode
    lane: E.Var
    sharded: set = field(default_factory=set)

    @property
    def axis(self) -> int:
        return _AXIS[self.mode]


def current(p: Any) -> LaneSplit | None:
    return p.__dict__.get("lane_split")


def aiv_shard(p: Any, node: ast.Call, args: list, kwargs: dict) -> Any:
    """``pl.aiv_shard(x)``: the lane's half of ``x`` (a tile defined outside the lane region)."""
    x = _one_tile(p, node, "pl.aiv_shard", args, kwargs)
    split = current(p)
    if split is None:
        raise p.error("pl.aiv_shard(x) is written inside a pl.split_aiv lane region", node)
    if split.mode is SplitMode.NONE:
        return x
    shape = _static_2d(p, node, x.type, "pl.aiv_shard")
    if shape[split.axis] % 2:
        raise p.error(f"pl.aiv_shard: the tile's extent {shape[split.axis]} along the split axis is odd", node)
    # parsed as the whole tile, as the rest of the region is; the rewrite takes the lane's half
    var = p.temp(D.extract(x, 0, 0, shape, span=p.span(node)), node)
    split.sharded.add(var)
    return var


def aic_gather(p: Any, node: ast.Call, args: list, kwargs: dict) -> Any:
    """``pl.aic_gather(x)``: the lanes' halves of ``x`` joined back for the cube.

    In a split mode each AIV pushes its half to the cube through the V2C FIFO (``split`` 1 = rows,
    2 = columns) and the cube pops the joined tile into L1 (a Mat tile): the kernel becomes a group
    kernel with a cube section and a vector section (:mod:`pypto.ops.fifo`)."""
    x = _one_tile(p, node, "pl.aic_gather", args, kwargs)
    mode = p.__dict__.get("lane_modes", {}).get(x, SplitMode.NONE)
    if mode is SplitMode.NONE:
        return x
    axis = _AXIS[mode]
    shape = _static_2d(p, node, x.type, "pl.aic_gather")
    valid = list(x.type.valid_shape)
    if static_int(valid[axis]) != shape[axis]:
        raise p.error(f"pl.aic_gather joins whole halves: the lane's tile has {valid[axis]} valid of {shape[axis]} "
                      "along the split axis", node)
    whole, whole_valid = list(shape), list(valid)
    whole[axis] *= 2
    whole_valid[axis] = whole[axis]
    span = p.span(node)
    split = axis + 1  # 1: up/down (rows), 2: left/right (columns)
    if any(static_int(v) != n for v, n in zip(valid, shape, strict=True)):
        # the cube multiplies whole fractal boxes: a ragged half's padding must add nothing, so it is
        # zeroed before the push whatever the tile held there (the popped tile keeps its valid shape)
        x = p.temp(B.fillpad(x, "zero", span=span), node)
    p.emit(St.EvalStmt(fifo.push(fifo.V2C, x, split, span), span))
    return p.temp(fifo.pop(fifo.V2C, whole, whole_valid, x.type.dtype, split, span), node)


def _one_tile(p: Any, node: ast.Call, what: str, args: list, kwargs: dict) -> E.Expr:
    if len(args) != 1 or kwargs or not (isinstance(args[0], E.Expr) and isinstance(args[0].type, TileType)):
        raise p.error(f"{what}(x) takes one tile", node, PyptoTypeError)
    return args[0]


def _static_2d(p: Any, node: ast.AST, t: Any, what: str) -> list[int]:
    dims = [static_int(d) for d in t.shape]
    if len(dims) != 2 or any(d is None for d in dims):
        raise p.error(f"{what}: a split lane region halves 2-D tiles of static shape, got {list(t.shape)}", node)
    return dims


class Halver:
    """Rewrites the statements of a split lane region for one lane (see the module docstring)."""

    def __init__(self, p: Any, split: LaneSplit):
        self.p = p
        self.split = split
        self.axis = split.axis
        self.mapping: dict = {}  # old Var -> the lane's Var
        self.defined: set = set(split.sharded)  # the region's own values (whole-tile Vars, as parsed)

    # ------------------------------------------------------------------ statements
    def block(self, stmts: list) -> list:
        out: list = []
        for s in stmts:
            out.extend(self.stmt(s))
        return out

    def body(self, body: Any) -> St.SeqStmts:
        stmts = list(body.stmts) if isinstance(body, St.SeqStmts) else [body]
        return St.SeqStmts(tuple(self.block(stmts)), getattr(body, "span", E.UNKNOWN_SPAN))

    def stmt(self, s: Any) -> list:
        if isinstance(s, St.SeqStmts):
            return [self.body(s)]
        if isinstance(s, St.AssignStmt):
            self.defined.add(s.var)
            value = self.shard(s.value, s.span) if s.var in self.split.sharded else self.value(s.value, s.span)
            var = s.var
            if getattr(value, "type", None) is not var.type and isinstance(var.type, TileType):
                var = E.Var(var.name, value.type, var.span)
                self.mapping[s.var] = var
            return [St.AssignStmt(var, value, s.span)]
        if isinstance(s, St.EvalStmt):
            return [St.EvalStmt(self.value(s.expr, s.span), s.span)]
        if isinstance(s, St.ForStmt):
            iters = self.iter_args(s.iter_args)
            body = self.body(s.body)
            rvs = self.retyped(s.return_vars, [ia.type for ia in iters])
            return [replace(s, start=self.sub(s.start), stop=self.sub(s.stop), step=self.sub(s.step),
                            iter_args=iters, body=body, return_vars=rvs)]
        if isinstance(s, St.WhileStmt):
            iters = self.iter_args(s.iter_args)
            cond = self.sub(s.condition)
            body = self.body(s.body)
            return [replace(s, condition=cond, iter_args=iters, body=body,
                            return_vars=self.retyped(s.return_vars, [ia.type for ia in iters]))]
        if isinstance(s, St.IfStmt):
            then = self.body(s.then_body)
            other = self.body(s.else_body) if s.else_body is not None else None
            yielded = _last_yield(then)
            types = [v.type for v in yielded.value] if yielded is not None else [v.type for v in s.return_vars]
            return [replace(s, condition=self.sub(s.condition), then_body=then, else_body=other,
                            return_vars=self.retyped(s.return_vars, types))]
        if isinstance(s, St.YieldStmt):
            return [St.YieldStmt(tuple(self.sub(v) for v in s.value), s.span)]
        return [self.sub(s)]

    def iter_args(self, iter_args: tuple) -> tuple:
        out = []
        for ia in iter_args:
            self.defined.add(ia)
            init = self.sub(ia.init_value) if ia.init_value is not None else None
            t = init.type if init is not None and isinstance(ia.type, TileType) else ia.type
            new = E.IterArg(ia.name, t, ia.span, init)
            self.mapping[ia] = new
            out.append(new)
        return tuple(out)

    def retyped(self, old: tuple, types: list) -> tuple:
        out = []
        self.defined.update(old)
        for v, t in zip(old, types, strict=False):
            if t != v.type:
                nv = E.Var(v.name, t, v.span)
                self.mapping[v] = nv
                v = nv
            out.append(v)
        return tuple(out)

    def sub(self, node: Any) -> Any:
        return substitute(node, self.mapping) if self.mapping else node

    # ------------------------------------------------------------------ values
    def value(self, v: Any, span: Any) -> Any:
        if not isinstance(v, E.Call) or isinstance(v.op, E.GlobalVar):
            if isinstance(v, E.Call):
                self.refuse(f"a call of '{v.op.name}'", span)
            return self.sub(v)
        name = v.op.name
        if name.startswith("tensor."):
            self.refuse(f"the tensor-level op {name}", span)
        memory = v.kwargs.get("target_memory")
        if name.startswith(_CUBE_OPS) or (memory is not None and memory is not MemorySpace.Vec):
            self.refuse(f"the cube-side op {name} (cube ops stay outside lane regions, spec §4.5)", span)
        for a in v.args:
            if isinstance(a, E.Var) and isinstance(a.type, TileType) and a not in self.defined:
                self.refuse(f"the tile '{a.name}' from outside the region, unless read as pl.aiv_shard({a.name}),", span)
        args = [self.sub(a) for a in v.args]
        if name == "block.load":
            return self.load(v, args, span)
        if name == "block.store":
            return self.store(v, args, span)
        if name in _ALLOCATIONS:
            args[0] = E.MakeTuple(tuple(self.halved_dims(list(args[0].elements), span)), args[0].span)
            return create_op_call(name, args, dict(v.kwargs), v.span)
        if any(isinstance(a, E.MakeTuple) for a in args):
            self.refuse(f"{name}, which takes a shape or an index,", span)
        return self.rebuilt(v, args, span)

    def shard(self, v: E.Call, span: Any) -> E.Call:
        """``pl.aiv_shard(x)`` (parsed as a whole-tile extract of ``x``): the lane's half of ``x``."""
        x = v.args[0]
        dims = [static_int(d) for d in x.type.shape]
        half = dims[self.axis] // 2
        start = E.BINARY_BUILDERS["Mult"](self.split.lane, E.ConstInt(half, DataType.INDEX, span), span)
        row, col = (start, 0) if self.axis == 0 else (0, start)
        dims[self.axis] = half
        return D.extract(x, row, col, dims, span=span)

    def rebuilt(self, v: E.Call, args: list, span: Any) -> E.Call:
        """``v`` on the halved operands, checked to halve along with them."""
        new = create_op_call(v.op.name, args, dict(v.kwargs), v.span)
        old_t, new_t = v.type, new.type
        if not isinstance(old_t, TileType):
            return new
        halved_operand = any(isinstance(a, E.Expr) and isinstance(a.type, TileType)
                             and self.extent(a.type) != self.extent(o.type) for a, o in zip(args, v.args, strict=False))
        before, after = self.extent(old_t), self.extent(new_t)
        if not halved_operand:  # broadcast vectors, aiv_shard halves, scalars: as written
            return new
        if before == 1 and after == 1:
            self.refuse(f"{v.op.name}, which reduces along the split axis (each lane would hold a partial result),",
                        span)
        if before is None or after is None or before != after * 2:
            self.refuse(f"{v.op.name} (its result does not halve with its operands)", span)
        return new

    def extent(self, t: TileType) -> int | None:
        dims = [static_int(d) for d in t.shape]
        return dims[self.axis] if len(dims) == 2 else None

    def halved_dims(self, dims: list, span: Any) -> list:
        n = static_int(dims[self.axis]) if len(dims) == 2 else None
        if n is None:
            self.refuse("a tile that is not 2-D with a static extent along the split axis", span)
        if n == 1:
            return dims
        if n % 2:
            self.refuse(f"a tile of extent {n} along the split axis (odd)", span)
        out = list(dims)
        out[self.axis] = E.ConstInt(n // 2, DataType.INDEX, span)
        return out

    def moved(self, offsets: E.MakeTuple, half: int, span: Any) -> E.MakeTuple:
        """``offsets`` with the split axis moved to this lane's half (``+ lane * half``)."""
        items = list(offsets.elements)
        shift = E.BINARY_BUILDERS["Mult"](self.split.lane, E.ConstInt(half, DataType.INDEX, span), span)
        items[self.axis] = E.BINARY_BUILDERS["Add"](items[self.axis], shift, span)
        return E.MakeTuple(tuple(items), offsets.span)

    def load(self, v: E.Call, args: list, span: Any) -> E.Call:
        tensor, offsets, shapes, valid = args[:4]
        dims, vdims = list(shapes.elements), list(valid.elements)
        if len(dims) != 2:
            self.refuse("a load of a tile that is not 2-D", span)
        n, vn = static_int(dims[self.axis]), static_int(vdims[self.axis])
        if n is None or vn != n:
            self.refuse("a load whose valid region is narrower than its window along the split axis", span)
        if n == 1:
            return create_op_call(v.op.name, args, dict(v.kwargs), v.span)
        halved = self.halved_dims(dims, span)
        vhalved = list(vdims)
        vhalved[self.axis] = halved[self.axis]
        new = [tensor, self.moved(offsets, n // 2, span), E.MakeTuple(tuple(halved), shapes.span),
               E.MakeTuple(tuple(vhalved), valid.span), *args[4:]]
        return create_op_call(v.op.name, new, dict(v.kwargs), v.span)

    def store(self, v: E.Call, args: list, span: Any) -> E.Call:
        tile, offsets = args[0], args[1]
        old = self.extent(v.args[0].type)
        new = self.extent(tile.type)
        if old is None or new is None:
            self.refuse("a store of a tile that is not 2-D", span)
        if old == 2 * new:
            args[1] = self.moved(offsets, new, span)
        elif old != new:
            self.refuse("a store whose tile does not halve", span)
        return create_op_call(v.op.name, args, dict(v.kwargs), v.span)

    def refuse(self, what: str, span: Any) -> None:
        mode = self.split.mode.name
        raise PyptoTypeError(f"pl.split_aiv(mode=pl.SplitMode.{mode}) halves every vector tile between the two AIVs; "
                             f"{what} cannot be halved that way (write the lanes' shares with SplitMode.NONE and "
                             "the lane index)", span)


def _last_yield(body: St.SeqStmts) -> St.YieldStmt | None:
    stmts = list(body.stmts)
    return stmts[-1] if stmts and isinstance(stmts[-1], St.YieldStmt) else None


def halve(p: Any, split: LaneSplit, stmts: list) -> tuple[list, dict]:
    """``stmts`` (a split region's body, parsed for whole tiles) rewritten for one lane, and the
    mapping of the region's variables to the lane's."""
    h = Halver(p, split)
    out = h.block(stmts)
    return out, h.mapping
