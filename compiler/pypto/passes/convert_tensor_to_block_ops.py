"""ConvertTensorToBlockOps: tensor-level ops in InCore functions become load -> block ops -> store
(spec §6.3; seed 003 §1-§3: the compiler, not the user, tiles tensor primitives).

A kernel written with tensor ops (``pl.add(a, b)`` on Tensors, the ``*_scalar`` family, ``exp``,
``maximum``, ``row_max``/``row_sum``, ``cast``, 2-D ``matmul``) is lowered as one fused tile loop:

* The element-wise chain is evaluated block by block over a grid of ``[tr, tc]`` tiles: each block
  loads the inputs' windows, runs every op on tiles and stores the returned values' windows. Fusing
  the whole chain per block (seed 003 §3.6) keeps intermediates on chip; nothing but the kernel's
  inputs and results touches DDR.
* The block size is the whole tensor when every tile the chain needs fits the Vec buffer together
  and each tile is at most ``max_tile_bytes``; otherwise rows (and, without row reductions, columns)
  are split. Row reductions need whole rows, so their kernels only split rows.
* Tails are handled by valid shapes (seed 003 §3.5): every block uses the same tile shape, and the
  last block along an axis that does not divide evenly has a smaller static ``valid_shape``, so
  loads, ops and stores touch only the valid region. Column counts are padded to the 32-byte row
  alignment the same way.
* Values shaped ``[R, 1]`` (row reductions) are row vectors; ``x - row_max(x)`` style broadcasts
  become ``row_expand_sub`` etc. Other broadcasts (``[R, C] * [1, C]``, ``[R, 1] + [1, C]``) are
  converted with whole-tensor tiles and made explicit with the expand ops by the pre-memory
  normalisation (:mod:`pypto.lib.broadcast`).
* A returned ``matmul`` of any M, N, K and batch dims is a loop nest over the cube buffers
  (:mod:`pypto.lib.matmul`: M/N blocks, split-K accumulated in L0C, ragged tails as zero-padded
  boxes with valid shapes) that stores straight into its Out tensor. A matmul whose product feeds
  another op of the kernel (and kernels mixing tensor ops with explicit block ops) is converted
  without a loop: operands go DDR -> Mat -> Left/Right (``move(transpose=True)`` for
  ``a_trans``/``b_trans``), the product lands in Acc; those shapes must fit the cube buffers.

Each returned value that became a tile gets a new ``Out`` parameter ``out_<k>`` of the original
tensor type, and every call site allocates it with ``tensor.create`` and passes it along.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from pypto.dtype import DataType
from pypto.enums import CAPACITY, FunctionType, MemorySpace, ParamDirection
from pypto.errors import CompileError
from pypto.ir import expr as E
from pypto.ir import stmt as St
from pypto.ir.expr import static_int
from pypto.ir.types import ScalarType, TensorType, TileType, nbytes, shape_str, static_shape
from pypto.ir.visitor import stmt_list, substitute, walk, walk_stmts
from pypto.lib import DEFINITIONS
from pypto.lib.broadcast import lower_binary
from pypto.lib.emit import DYNAMIC_SUPPORT
from pypto.lib.matmul import MatmulEmitter, cube_granule
from pypto.ops import block as B
from pypto.ops import tensor as T
from pypto.passes.base import NameAllocator, Pass
from pypto.passes.ir_utils import all_names

_ELEMENTWISE = {"tensor.add": "add", "tensor.sub": "sub", "tensor.mul": "mul", "tensor.div": "div",
                "tensor.maximum": "maximum"}
_SCALAR = {"tensor.add_scalar": "adds", "tensor.sub_scalar": "subs", "tensor.mul_scalar": "muls",
           "tensor.div_scalar": "divs"}
_ROW_EXPAND = {"add": "row_expand_add", "sub": "row_expand_sub", "mul": "row_expand_mul", "div": "row_expand_div"}
_ROW_REDUCE = {"tensor.row_max": "row_max", "tensor.row_sum": "row_sum"}
CONVERTIBLE = set(_ELEMENTWISE) | set(_SCALAR) | set(_ROW_REDUCE) | {"tensor.exp", "tensor.cast", "tensor.matmul"}
ALIGN_BYTES = 32


def _tensor_call(e: Any) -> bool:
    return isinstance(e, E.Call) and not isinstance(e.op, E.GlobalVar) and e.op.name in CONVERTIBLE


def _ceil(a: int, b: int) -> int:
    return -(-a // b) * b


def _idx(v: int) -> E.ConstInt:
    return E.ConstInt(v, DataType.INDEX)


@dataclass
class _Geometry:
    """Where one block of the grid is: row/col offsets (expressions) and valid extents (ints)."""

    ro: Any
    co: Any
    vr: int
    vc: int


class _Converter:
    """Lowers one InCore function; ``out_params`` lists the new Out parameters (in order)."""

    def __init__(self, func: St.Function, max_tile_bytes: int, log: list | None = None):
        self.func = func
        self.log = log
        self.max_tile = max_tile_bytes
        self.names = NameAllocator(all_names(func))
        self.stmts = _without_tensor_aliases(list(stmt_list(func.body)))
        self.out_params: list[E.Var] = []  # where each returned value is stored, in return order
        self.added_params: list[E.Var] = []  # the new Out parameters among them (call sites allocate them)

    # ------------------------------------------------------------------ checks and planning
    def convert(self) -> St.Function:
        top = set(stmt_list(self.func.body))
        for s in walk_stmts(self.func.body):
            if s in top:
                continue
            if isinstance(s, St.AssignStmt) and _tensor_call(s.value):
                raise CompileError(
                    f"tensor-level op {s.value.op.name} inside a loop or if of the InCore function "
                    f"'{self.func.name}' is not converted; write that part with tile ops (pl.load/pl.store)",
                    s.span,
                )
        ops = [s for s in self.stmts if isinstance(s, St.AssignStmt) and _tensor_call(s.value)]
        self._refuse_library_ops_beside_a_matmul(ops)
        self.converted = {s.var for s in ops}
        for s in self.stmts:
            for n in walk(s):
                if isinstance(n, E.Call) and n.op.name == "block.store" and any(
                    x in self.converted for x in walk(n)
                ):
                    raise CompileError("a tensor computed by a tensor-level op cannot be a tile op operand", s.span)
        rets = [s for s in self.stmts if isinstance(s, St.ReturnStmt)]
        self.ret = rets[-1] if rets else None
        self.results = list(dict.fromkeys(v for v in (self.ret.value if self.ret else ()) if v in self.converted))
        final = rebound_output_params(self.func, self.results)
        for r in self.results:
            if static_shape(r.type) is None and not self._allocatable(r):
                raise CompileError(f"'{r.name}' ({shape_str(r.type.shape)}): a kernel with tensor.matmul needs "
                                   f"static shapes but a product's M; {DYNAMIC_SUPPORT}", r.span)
            out = final.get(r)
            if out is None:
                out = E.Var(self.names.fresh(f"out_{len(self.out_params)}"), r.type, r.span)
                self.added_params.append(out)
            self.out_params.append(out)

        pure = all(
            s in ops or isinstance(s, St.ReturnStmt)
            or (isinstance(s, St.AssignStmt) and isinstance(s.var.type, ScalarType))
            for s in self.stmts
        )
        has_mm = any(s.value.op.name == "tensor.matmul" for s in ops)
        grid = self.plan_grid(ops) if pure and not has_mm else None
        if grid is not None:
            body = self.emit_grid(ops, grid)
        else:
            body = self.emit_single()
        params = tuple(zip(self.func.params, self.func.param_directions, strict=False))
        params += tuple((p, ParamDirection.Out) for p in self.added_params)
        return replace(self.func, params=tuple(p for p, _ in params), param_directions=tuple(d for _, d in params),
                       body=St.SeqStmts(tuple(body), self.func.body.span if hasattr(self.func.body, "span") else None))

    def _refuse_library_ops_beside_a_matmul(self, ops: list) -> None:
        """A kernel holding a tensor-level matmul is lowered here as a whole, without the library's tile
        loops (ExpandLibraryOps leaves it alone), and its product lands in cube buffers: a vector op
        beside it would be left unlowered (a library op) or mix vector and cube tiles in one kernel,
        which no core runs. SplitCubeVector splits such kernels first, so this is reached only when
        this pass runs without it; say so at that op, instead of failing verification on internal
        names or code generation at the function."""
        mm = next((s for s in ops if s.value.op.name == "tensor.matmul"), None)
        if mm is None:
            return
        for s in self.stmts:
            call = s.value if isinstance(s, St.AssignStmt) else None
            if (isinstance(call, E.Call) and not isinstance(call.op, E.GlobalVar) and call.op.name != "tensor.matmul"
                    and (call.op.name in DEFINITIONS or _tensor_call(call))):
                short = call.op.name.split(".", 1)[1].removesuffix("_scalar")
                raise CompileError(
                    f"the kernel '{self.func.name}' mixes a tensor-level pl.matmul (line {mm.span.line}) with "
                    f"pl.{short}, and no core runs both: run SplitCubeVector (part of every strategy) first, which "
                    "splits it into cube and vector kernels", s.span)

    def tensors(self, ops: list) -> list:
        out: dict = {}
        for s in ops:
            for a in s.value.args:
                if isinstance(getattr(a, "type", None), TensorType):
                    out.setdefault(a, None)
            out.setdefault(s.var, None)
        return list(out)

    def plan_grid(self, ops: list) -> tuple | None:
        """(R, C, tr, tc) for a fused grid over ``[R, C]`` tensors, or None when shapes do not fit the
        pattern (everything ``[R, C]``, an ``[R, 1]`` row vector, or a ``[1, C]`` / ``[C]`` column
        vector, which every block reads at its column offset)."""
        vals = self.tensors(ops)
        shapes = [static_shape(v.type) for v in vals]
        if not vals or any(s is None or len(s) not in (1, 2) for s in shapes):
            return None
        shapes = [(1, *s) if len(s) == 1 else s for s in shapes]
        R = max(s[0] for s in shapes)
        C = max(s[1] for s in shapes)
        if any(s[0] not in (R, 1) or s[1] not in (C, 1) or s == (1, 1) != (R, C) for s in shapes):
            return None
        self.row_vecs = {v for v, s in zip(vals, shapes, strict=False) if s[1] == 1 and C != 1}
        self.col_vecs = {v for v, s in zip(vals, shapes, strict=False) if s[0] == 1 and R != 1}
        if any(s[0] != R for v, s in zip(vals, shapes, strict=False) if v not in self.col_vecs):
            return None
        bytes_ = [v.type.dtype.nbytes for v in vals]
        bmax, bmin = max(bytes_), min(bytes_)
        reduces = any(s.value.op.name in _ROW_REDUCE for s in ops)
        col_align = max(1, ALIGN_BYTES // bmin)
        row_align = max(8, ALIGN_BYTES // bmin) if self.row_vecs else 8
        # tiles one block needs: each loaded input and each op result, plus a scratch per row reduction
        vecs = self.row_vecs | self.col_vecs
        n_full = sum(1 for v in vals if v not in vecs) + sum(1 for s in ops if s.value.op.name in _ROW_REDUCE)
        n_full += sum(2 for s in ops if _mixes_vectors(s, vecs))  # a broadcast expands its vector first
        n_row, n_col = len(self.row_vecs), len(self.col_vecs)

        def fits(tr: int, tc: int) -> bool:
            full = tr * tc * bmax
            total = n_full * full + n_row * _ceil(tr * bmax, ALIGN_BYTES) + n_col * _ceil(tc * bmax, ALIGN_BYTES)
            return full <= self.max_tile and total <= CAPACITY[MemorySpace.Vec]

        cp = _ceil(C, col_align)
        rp = _ceil(R, row_align) if self.row_vecs else R
        if fits(rp, cp):
            return R, C, rp, cp
        if fits(row_align, cp):
            tr = row_align
            while tr + row_align <= rp and fits(tr + row_align, cp):
                tr += row_align
            return R, C, tr, cp
        if reduces:
            raise CompileError(
                f"'{self.func.name}': a row reduction over {C} columns needs whole rows, and {row_align} rows of "
                f"them do not fit in a tile of {self.max_tile} bytes / the Vec buffer",
                self.func.span,
            )
        tc = col_align
        while tc + col_align <= cp and fits(row_align, tc + col_align):
            tc += col_align
        return R, C, row_align, tc

    # ------------------------------------------------------------------ emission
    def let(self, base: str, call: E.Call, out: list, valid: tuple | None = None) -> E.Var:
        t = call.type
        if valid is not None and isinstance(t, TileType):
            t = replace(t, tile_view=replace(t.view, valid_shape=tuple(_idx(x) for x in valid)))
        v = E.Var(self.names.fresh(base), t, call.span)
        out.append(St.AssignStmt(v, call, call.span))
        return v

    def emit_grid(self, ops: list, grid: tuple) -> list:
        R, C, tr, tc = grid
        self.tile_shape = (tr, tc)
        body = [s for s in self.stmts if s not in ops and not isinstance(s, St.ReturnStmt)]
        outs = list(self.out_params)

        def segments(extent: int, t: int) -> list:
            n, rem = divmod(extent, t)
            segs = []
            if n == 1:
                segs.append((None, 0, t))
            elif n > 1:
                segs.append(("loop", n, t))
            if rem:
                segs.append((None, n * t, rem))
            return segs

        def along(segs: list, axis_name: str, outs: list, inner: Any) -> tuple[list, list]:
            stmts: list = []
            for kind, start, valid in segs:
                if kind is None:
                    more, outs = inner(_idx(start), valid, outs)
                    stmts += more
                    continue
                lv = E.Var(self.names.fresh(axis_name), ScalarType(DataType.INDEX))
                step = tr if axis_name == "bi" else tc
                off = E.Mul(lv, _idx(step), DataType.INDEX)
                bases = [r.name for r in self.results]
                ias = [E.IterArg(self.names.fresh(f"{b}_iter"), o.type, o.span, o) for b, o in zip(bases, outs, strict=False)]
                more, new = inner(off, valid, ias)
                rvs = [E.Var(self.names.fresh(f"{b}_done"), o.type, o.span) for b, o in zip(bases, outs, strict=False)]
                loop_body = St.SeqStmts(tuple(more + ([St.YieldStmt(tuple(new))] if new else [])))
                stmts.append(St.ForStmt(lv, _idx(0), _idx(start), _idx(1), tuple(ias), loop_body, tuple(rvs)))
                outs = rvs
            return stmts, outs

        def rows(ro: Any, vr: int, outs: list) -> tuple[list, list]:
            return along(segments(C, tc), "bj", outs, lambda co, vc, o: self.emit_block(ops, _Geometry(ro, co, vr, vc), o))

        stmts, outs = along(segments(R, tr), "bi", outs, rows)
        return body + stmts + [self.final_return(outs)]

    def final_return(self, outs: list) -> St.ReturnStmt:
        m = dict(zip(self.results, outs, strict=False))
        vals = tuple(m.get(v, v) for v in self.ret.value) if self.ret is not None else ()
        return St.ReturnStmt(vals, self.ret.span if self.ret is not None else E.UNKNOWN_SPAN)

    def geo_of(self, v: Any, g: _Geometry) -> tuple[list, list, tuple]:
        """(offsets, tile shape, valid shape) of tensor ``v`` in block ``g``."""
        tr, tc = self.tile_shape
        if v in self.row_vecs:
            return [g.ro, _idx(0)], [tr, 1], (g.vr, 1)
        if len(v.type.shape) == 1:  # a [C] vector is one row: the block's column window of it
            return [g.co], [tc], (g.vc,)
        if v in self.col_vecs:
            return [_idx(0), g.co], [1, tc], (1, g.vc)
        return [g.ro, g.co], [tr, tc], (g.vr, g.vc)

    def emit_block(self, ops: list, g: _Geometry, outs: list) -> tuple[list, list]:
        out: list = []
        tiles: dict = {}

        def tile_of(v: Any) -> Any:
            if v not in tiles:
                offs, shape, valid = self.geo_of(v, g)
                tiles[v] = self.let(f"{v.name}_tile", B.load(v, offs, shape, list(valid), MemorySpace.Vec), out)
            return tiles[v]

        for s in ops:
            _, _, valid = self.geo_of(s.var, g)
            tiles[s.var] = self.let(f"{s.var.name}_tile", self.block_call(s, tile_of, out, g), out, valid)
        new_outs = []
        for r, o in zip(self.results, outs, strict=False):
            offs, _, _ = self.geo_of(r, g)
            new_outs.append(self.let(f"{r.name}_out", B.store(tiles[r], offs, o), out))
        return out, new_outs

    def block_call(self, s: St.AssignStmt, tile_of: Any, out: list, g: _Geometry | None) -> E.Call:
        c, span = s.value, s.value.span
        name = c.op.name
        if name in _ELEMENTWISE:
            a, b = c.args
            short = _ELEMENTWISE[name]
            ka, kb = self.vec_kind(a), self.vec_kind(b)
            if ka == kb:
                return getattr(B, short)(tile_of(a), tile_of(b), span=span)
            # a row or column vector against a full block (or the two vectors: an outer op): the
            # expand-op lowering tile-level code uses (lib/broadcast.py)
            ta, tb = tile_of(a), tile_of(b)
            tr, tc = self.tile_shape
            vr, vc = (g.vr, g.vc) if g is not None else (tr, tc)
            return lower_binary(short, ta, tb, (ka, kb), [tr, tc],
                                lambda base, e: self.let(f"{s.var.name}_{base}", e, out, (vr, vc)), span)
        if name in _SCALAR:
            return getattr(B, _SCALAR[name])(tile_of(c.args[0]), c.args[1], span=span)
        if name == "tensor.exp":
            return B.exp(tile_of(c.args[0]), span=span)
        if name == "tensor.cast":
            return B.cast(tile_of(c.args[0]), c.kwargs["target_type"], c.kwargs.get("mode", 2), span=span)
        if name in _ROW_REDUCE:
            if c.kwargs.get("keep_dim") is False:
                raise CompileError(f"{name} with keep_dim=False cannot be converted in a kernel: the row "
                                   "reduction tile is [R, 1]; keep the unit dim (the default)", s.span)
            src = tile_of(c.args[0])
            tmp = self.let(f"{s.var.name}_tmp", B.create_tile(list(src.type.shape), src.type.dtype, MemorySpace.Vec,
                                                              span=span), out)
            return getattr(B, _ROW_REDUCE[name])(src, tmp, span=span)
        raise CompileError(f"{name} cannot be converted here", s.span)

    def vec_kind(self, v: Any) -> str:
        """'row' for an [R, 1] row vector, 'col' for a [1, C] / [C] column vector, else 'full'."""
        return "row" if v in self.row_vecs else "col" if v in self.col_vecs else "full"

    def _allocatable(self, r: Any) -> bool:
        """Whether result ``r`` of run-time shape is a tiled matmul's product stored straight to its Out
        tensor (its M a dim of a parameter, which the caller allocates from ``tensor.dim``)."""
        made = next((s for s in self.stmts if isinstance(s, St.AssignStmt) and s.var is r), None)
        if made is None or not isinstance(made.value, E.Call) or made.value.op.name != "tensor.matmul":
            return False
        return all(static_int(d) is not None or dim_source(self.func, d) is not None for d in r.type.shape)

    # ------------------------------------------------------------------ whole-tensor conversion
    def emit_single(self) -> list:
        """Convert op by op with whole-tensor tiles, keeping every other statement in place."""
        self.row_vecs, self.col_vecs = set(), set()
        out: list = []
        tiles: dict = {}
        stored: dict = {}

        def tile_of(v: Any) -> Any:
            if v not in tiles:
                shape = static_shape(v.type)
                if shape is None:
                    raise CompileError(f"'{v.name}': tensor-level ops need static shapes", v.span)
                padded = list(shape[:-1]) + [_ceil(shape[-1], max(1, ALIGN_BYTES // v.type.dtype.nbytes))]
                if shape[-1] == 1:
                    # a unit last dim broadcasts: padding it would turn [R, 1] or [1, 1] into a full-width
                    # tile that the op would then read as data (an [R, 1] row vector is a column-major
                    # tile, as in the grid)
                    padded = list(shape)
                self.check_fits(v, padded, MemorySpace.Vec)
                load = B.load(v, [0] * len(shape), padded, list(shape), MemorySpace.Vec)
                tiles[v] = self.let(f"{v.name}_tile", load, out)
            return tiles[v]

        for s in self.stmts:
            if s is self.ret:
                break
            if not (isinstance(s, St.AssignStmt) and _tensor_call(s.value)):
                out.append(s)
                continue
            if s.value.op.name == "tensor.matmul":
                if s.var in self.results and not self.used_by_ops(s.var):
                    # the product goes straight to its Out tensor, block by block (pypto.lib.matmul)
                    o = self.out_params[self.results.index(s.var)]
                    more, stored[s.var] = self.tiled_matmul(s, o)
                    out += more
                    continue
                tiles[s.var] = self.matmul(s, out)
                continue
            shape = static_shape(s.var.type)
            if shape is None or len(shape) != 2 and s.value.op.name in _ROW_REDUCE:
                raise CompileError(f"'{s.var.name}': tensor-level ops need static shapes", s.span)
            tiles[s.var] = self.let(f"{s.var.name}_tile", self.block_call(s, tile_of, out, None), out, shape)
        outs = []
        for r, o in zip(self.results, self.out_params, strict=False):
            if r in stored:
                outs.append(stored[r])
                continue
            outs.append(self.let(f"{r.name}_out", B.store(tiles[r], [0] * len(r.type.shape), o), out))
        return out + [self.final_return(outs)]

    def used_by_ops(self, v: Any) -> bool:
        """Whether another statement than the return reads ``v``."""
        return any(v in walk(s) for s in self.stmts if s is not self.ret and not (isinstance(s, St.AssignStmt)
                                                                                 and s.var is v))

    def tiled_matmul(self, s: St.AssignStmt, out_param: E.Var) -> tuple[list, E.Var]:
        """``s`` (a matmul whose result is returned) as a loop nest over the cube buffers."""
        for x in s.value.args:
            if x in self.converted:
                raise CompileError("tensor.matmul operands must be kernel parameters (inputs from DDR)", s.span)
        return MatmulEmitter(s.value, self.names.fresh, s.value.span, self.log, self.func.name).emit(out_param)

    def check_fits(self, v: Any, shape: list, space: MemorySpace) -> None:
        size = nbytes(TileType(tuple(shape), v.type.dtype))
        if size is not None and size > CAPACITY[space]:
            raise CompileError(
                f"'{v.name}' {shape_str(v.type.shape)} {v.type.dtype.name} ({size} bytes) does not fit in {space.name} "
                f"({CAPACITY[space]} bytes); only element-wise / row-reduction kernels are tiled automatically",
                getattr(v, "span", None),
            )

    def matmul(self, s: St.AssignStmt, out: list) -> E.Var:
        c = s.value
        a, b = c.args
        span = c.span
        operands = []
        for x, trans, space in ((a, c.kwargs.get("a_trans"), MemorySpace.Left),
                                (b, c.kwargs.get("b_trans"), MemorySpace.Right)):
            if x in self.converted:
                raise CompileError("tensor.matmul operands must be kernel parameters (inputs from DDR)", s.span)
            shape = static_shape(x.type)
            if shape is None or len(shape) != 2:
                raise CompileError("tensor.matmul: only static 2-D operands are converted", s.span)
            padded = [_ceil(d, cube_granule(x.type.dtype)) for d in shape]
            self.check_fits(x, padded, MemorySpace.Mat)
            self.check_fits(x, padded, space)
            load = B.load(x, [0, 0], padded, list(shape), MemorySpace.Mat, span=span)
            mat = self.let(f"{x.name}_mat", load, out)
            operands.append(self.let(f"{x.name}_{space.name.lower()}", B.move(mat, space, bool(trans), span=span), out))
        call = B.matmul(operands[0], operands[1], span=span)
        if call.type.dtype is not s.var.type.dtype:
            raise CompileError(
                f"tensor.matmul: the cube accumulates in {call.type.dtype.name}; a {s.var.type.dtype.name} result "
                "would need a cast on the way out, which is not converted (use out_dtype=pl.FP32)",
                s.span,
            )
        self.check_fits(s.var, [static_int(d) for d in call.type.shape], MemorySpace.Acc)
        return self.let(f"{s.var.name}_acc", call, out)


def rebound_output_params(func: St.Function, returned: list) -> dict:
    """Returned values that are the final value of an Out/InOut tensor parameter, mapped to it.

    ``y = pl.relu(x); return y`` rebinds the Out parameter ``y`` (ConvertToSSA names the new value
    ``y_<n>``); the caller's tensor is the parameter (spec pypto-jit §2.7), so the value is stored
    there rather than into a fresh tensor only a caller that rebinds the result would see. A parameter
    the kernel stores into or passes on itself is left alone.
    """
    written = {n.args[i] for n in walk(func.body) if isinstance(n, E.Call) and not isinstance(n.op, E.GlobalVar)
               for i in (_WRITES.get(n.op.name, ()))if i < len(n.args)}
    written |= {a for n in walk(func.body) if isinstance(n, E.Call) and isinstance(n.op, E.GlobalVar) for a in n.args}
    names = _alias_names(func)
    out: dict = {}
    for p, d in zip(func.params, func.param_directions, strict=False):
        if d is ParamDirection.In or not isinstance(p.type, TensorType) or p in written:
            continue
        pattern = re.escape(p.name) + r"(_\d+)?"
        for r in returned:
            if r not in out and r.type == p.type and any(re.fullmatch(pattern, n) for n in names.get(r, {r.name})):
                out[r] = p
                break
    return out


def _alias_names(func: St.Function) -> dict:
    """Per tensor variable, its own name and the names bound to it by plain aliases (``y = t`` makes
    ``t`` the final value of ``y``: the aliases are folded away before the results are matched)."""
    target: dict = {}
    for s in walk_stmts(func.body):
        if isinstance(s, St.AssignStmt) and isinstance(s.value, E.Var) and isinstance(s.var.type, TensorType):
            target[s.var] = s.value
    names: dict = {}
    for alias in target:
        v, seen = alias, 0
        while v in target and seen < len(target):
            v, seen = target[v], seen + 1
        names.setdefault(v, {v.name}).add(alias.name)
    return names


# block/tensor ops that write one of their arguments (by position)
_WRITES = {"block.store": (2,), "block.write_gm": (1,), "tensor.assemble": (0,), "tensor.write": (0,)}


def _mixes_vectors(s: St.AssignStmt, vecs: set) -> bool:
    """Whether a binary op combines operands of different kinds (a vector with a full block)."""
    if s.value.op.name not in _ELEMENTWISE:
        return False
    a, b = s.value.args
    return (a in vecs) != (b in vecs) or (a in vecs and b in vecs and static_shape(a.type) != static_shape(b.type))


def _without_tensor_aliases(stmts: list) -> list:
    """The top-level statements with tensor aliases (``z = y``) folded into their uses.

    The conversion replaces a tensor computed by a tensor-level op with tiles and drops its
    definition, so an alias left in place would read a tensor nobody defines any more (the verifier
    then reports "'y' is used before it is defined" for ``z = y; return z``). An alias is just a
    second name: every later use of ``z`` becomes ``y``.
    """
    mapping: dict = {}
    out = []
    for s in stmts:
        s = substitute(s, mapping) if mapping else s
        if isinstance(s, St.AssignStmt) and isinstance(s.value, E.Var) and isinstance(s.var.type, TensorType):
            mapping[s.var] = s.value
            continue
        out.append(s)
    return out


def dim_source(func: St.Function, d: Any) -> tuple[int, int] | None:
    """``(parameter index, axis)`` of the first tensor parameter of ``func`` whose shape has the dynamic
    dim ``d`` (a ``pl.dynamic`` variable), or ``None``."""
    for i, p in enumerate(func.params):
        if isinstance(p.type, TensorType):
            for k, x in enumerate(p.type.shape):
                if x is d:
                    return i, k
    return None


def allocation(p: E.Var, kernel: St.Function | None, call: E.Call, fresh: Any, pre: list) -> E.Call:
    """``tensor.create`` of Out parameter ``p`` of ``kernel`` at ``call``: a dynamic dim of ``p`` is
    ``tensor.dim`` of the argument the kernel reads it from (bound in ``pre``)."""
    shape: list = []
    for d in p.type.shape:
        if static_int(d) is not None:
            shape.append(static_int(d))
            continue
        source = dim_source(kernel, d) if kernel is not None else None
        if source is None:
            raise CompileError(f"Out tensor '{p.name}' {shape_str(p.type.shape)}: its dim {d} is not a dim of an "
                               "argument, so the caller cannot allocate it", call.span)
        i, k = source
        dv = E.Var(fresh(f"{p.name}_d{len(shape)}"), ScalarType(DataType.INDEX), call.span)
        pre.append(St.AssignStmt(dv, T.dim(call.args[i], k, span=call.span), call.span))
        shape.append(dv)
    return T.create(shape, p.type.dtype, span=call.span)


def allocate_outputs(func: St.Function, added: dict, kernels: dict | None = None) -> St.Function:
    """At each call of a converted kernel, allocate its new Out tensors and pass them (a dynamic dim
    from the argument ``kernels[name]`` reads it from; without ``kernels`` every dim is static)."""
    names = NameAllocator(all_names(func))

    def block(body: Any) -> St.SeqStmts:
        out: list = []
        for s in stmt_list(body):
            out.extend(stmt(s))
        return St.SeqStmts(tuple(out), getattr(body, "span", E.UNKNOWN_SPAN))

    def stmt(s: Any) -> list:
        if isinstance(s, (St.ForStmt, St.WhileStmt, St.ScopeStmt)):
            return [replace(s, body=block(s.body))]
        if isinstance(s, St.IfStmt):
            eb = block(s.else_body) if s.else_body is not None else None
            return [replace(s, then_body=block(s.then_body), else_body=eb)]
        value = s.value if isinstance(s, St.AssignStmt) else s.expr if isinstance(s, St.EvalStmt) else None
        if not (isinstance(value, E.Call) and isinstance(value.op, E.GlobalVar) and value.op.name in added):
            return [s]
        pre, extra = [], []
        for p in added[value.op.name]:
            create = allocation(p, (kernels or {}).get(value.op.name), value, names.fresh, pre)
            v = E.Var(names.fresh(p.name), create.type, value.span)
            pre.append(St.AssignStmt(v, create, value.span))
            extra.append(v)
        call = replace(value, args=tuple(value.args) + tuple(extra))
        return pre + [replace(s, value=call) if isinstance(s, St.AssignStmt) else replace(s, expr=call)]

    return replace(func, body=block(func.body))


@dataclass(frozen=True)
class ConvertTensorToBlockOpsPass(Pass):
    """``max_tile_bytes`` bounds one tile of the fused grid: smaller tiles leave room for the other
    live tiles of a long chain and give the pipes several blocks to overlap."""

    name: ClassVar[str] = "convert-tensor-to-block-ops"
    dump_name: ClassVar[str] = "ConvertTensorToBlockOps"
    max_tile_bytes: int = 32 * 1024
    # one line per tiled matmul: its blocks and whether its K loop is double-buffered (and if not, why)
    log: list = field(default_factory=list, compare=False)

    def run(self, program: St.Program) -> St.Program:
        self.log.clear()
        funcs, added = [], {}
        for f in program.functions_list:
            if f.type is FunctionType.InCore and any(_tensor_call(n) for n in walk(f.body)):
                conv = _Converter(f, self.max_tile_bytes, self.log)
                f = conv.convert()
                if conv.added_params:
                    added[f.name] = conv.added_params
            funcs.append(f)
        if added:
            kernels = {f.name: f for f in funcs}
            funcs = [f if f.type is FunctionType.InCore else allocate_outputs(f, added, kernels) for f in funcs]
        return program.with_functions(funcs)
