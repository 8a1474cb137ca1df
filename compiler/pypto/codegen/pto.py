"""PTO (MLIR text) code generation (seed 000, pto-text-format.md). Never mutates the IR.

Each kernel becomes one module: constants, tensor views, tile allocations (``addr`` from
AllocateMemoryAddr), then the body; ``scf.for``/``scf.if`` carry only scalar values (tiles and tensors
live in buffers/views shared through their MemRefs).

The module is built as ``ptoisa.text.ast`` nodes and written by the one printer
(``ptoisa.text.printer``) in :data:`STYLE`, the compiler's spelling of the text format.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from ptoisa.errors import Loc
from ptoisa.text import ast as A
from ptoisa.text.parser import parse_module
from ptoisa.text.printer import PrintStyle, print_module
from pypto.codegen.common import checked_int_constant, core_kind, kernels, tile_dims, valid_dims
from pypto.codegen.legal_forms import operand_forms, valid_pair
from pypto.dtype import DataType
from pypto.enums import ROUND_MODES, AtomicType, CmpType, MemorySpace, PipeType, ScopeKind, TileLayout
from pypto.errors import CompileError
from pypto.ir import expr as E
from pypto.ir import stmt as St
from pypto.ir.expr import static_int
from pypto.ir.types import ScalarType, TensorType, TileType
from pypto.ir.visitor import stmt_list, walk, walk_stmts
from pypto.ops import fifo, isa
from pypto.passes.allocate_memory_addr import fifo_layout
from pypto.passes.analysis import defined_vars, memref_of, popped_memrefs
from pypto.passes.split_sections import CUBE, VECTOR, side_of_space

ARITH_INT = {
    "Add": "addi", "Sub": "subi", "Mul": "muli", "FloorDiv": "floordivsi", "FloorMod": "remsi", "Min": "minsi",
    "Max": "maxsi", "BitAnd": "andi", "BitOr": "ori", "BitXor": "xori", "And": "andi", "Or": "ori",
    "BitShiftLeft": "shli", "BitShiftRight": "shrsi",
}
# Unsigned integers: the unsigned division and remainder (their % is already Python's: both >= 0).
ARITH_UINT = {**ARITH_INT, "FloorDiv": "divui", "FloorMod": "remui", "Min": "minui", "Max": "maxui",
              "BitShiftRight": "shrui"}
ARITH_FLOAT = {"Add": "addf", "Sub": "subf", "Mul": "mulf", "FloatDiv": "divf", "FloorMod": "remf",
               "Min": "minimumf", "Max": "maximumf"}
CMP_INT = {"Eq": "eq", "Ne": "ne", "Lt": "slt", "Le": "sle", "Gt": "sgt", "Ge": "sge"}
CMP_FLOAT = {"Eq": "oeq", "Ne": "one", "Lt": "olt", "Le": "ole", "Gt": "ogt", "Ge": "oge"}
LAYOUT = {TileLayout.none_box: "none_box", TileLayout.row_major: "row_major", TileLayout.col_major: "col_major"}
# The compiler's spelling: short pipe/event enums, `attributes` on its own line, `return`, %e floats.
STYLE = PrintStyle(short_enum_kinds=frozenset({"pipe", "event"}), function_attrs_on_new_line=True,
                   bare_return=True, float_format=".6e")
GENERATED = Loc("<pypto>", 1, 1)
INDEX = A.ScalarType("index")
I32 = A.ScalarType("i32")
PIPE = A.OpaqueType("!pto.pipe")
I1 = A.ScalarType("i1")


def _has_aiv_lanes(func: St.Function) -> bool:
    return any(isinstance(n, E.Call) and n.op.name == "block.get_aiv_lane" for n in walk(func.body))


def _section(side: str, ops: list) -> A.Op:
    section = _op(f"pto.section.{side}")
    section.regions = [A.Region(ops=ops)]
    return section


def _op(name: str, **fields: Any) -> A.Op:
    return A.Op(name, GENERATED, **fields)


def scalar_type(dtype: DataType) -> A.ScalarType:
    """MLIR type of a scalar value: ``index``, or a signless integer / float type."""
    if dtype is DataType.INDEX:
        return INDEX
    if dtype.is_unsigned():
        return A.ScalarType(f"i{dtype.bits}")
    return A.ScalarType(dtype.mlir)


def tile_buf(t: TileType) -> A.TileBufType:
    rows, cols = tile_dims(t)
    vr, vc = valid_dims(t)
    m = t.memref
    loc = m.memory_space.loc if m is not None else "vec"
    view = t.view
    return A.TileBufType(loc, t.dtype.mlir, rows, cols, vr, vc, LAYOUT[view.blayout], LAYOUT[view.slayout],
                         view.fractal, int(view.pad))


def tensor_view_type(t: TensorType) -> A.TensorViewType:
    return A.TensorViewType(tuple(None for _ in t.shape), t.dtype.mlir)


class _FunctionGen:
    def __init__(self, func: St.Function, target_arch: str):
        self.func = func
        self.arch = target_arch
        self.counter = 0
        self.consts: dict = {}
        self.const_ops: list[A.Op] = []
        self.view_ops: list[A.Op] = []
        self.alloc_ops: list[A.Op] = []
        self.ops: list[A.Op] = []  # the region being filled
        self.values: dict = {}
        self.views: dict = {}  # DDR memref -> (view name, tensor type)
        self.shaped_views: dict = {}  # tensor.as_shape result name -> (view name, tensor type)
        self.buffers: dict = {}  # (memref, tile_buf type) -> name
        self.var_bufs: dict = {}  # tile variable -> (name, type) for values made by treshape
        # (memref, tile_buf, valid dims) -> name for tiles with a run-time valid shape; scoped per region
        self.dyn_buffers: dict = {}
        self.span: Any = None  # the source span of the statement being lowered
        self.op_spans: dict[int, Any] = {}  # id(emitted op) -> span of the statement it came from

    def new(self) -> str:
        self.counter += 1
        return f"%{self.counter - 1}"

    def emit(self, op: A.Op) -> None:
        self.ops.append(op)
        if self.span is not None:
            self.op_spans[id(op)] = self.span

    # ------------------------------------------------------------------ constants and values
    def const(self, value: Any, mlir: str) -> str:
        key = (repr(value), mlir)
        if key in self.consts:
            return self.consts[key]
        if mlir == "index":
            base = f"%c{value}" if value >= 0 else f"%c_neg{-value}"
        elif mlir == "i1":
            base = "%true" if value else "%false"
        elif mlir in ("f16", "f32", "bf16"):
            base = "%cst"
        else:
            base = f"%c{value}_{mlir}" if value >= 0 else f"%c_neg{-value}_{mlir}"
        name, i = base, 0
        while name in self.consts.values():
            i += 1
            name = f"{base}_{i}"
        self.consts[key] = name
        if mlir == "i1":
            literal: Any = bool(value)
        elif mlir in ("f16", "f32", "bf16"):
            literal = float(value)
        else:
            literal = int(value)
        self.const_ops.append(_op("arith.constant", results=[name], result_types=[A.ScalarType(mlir)],
                                  attrs={"value": literal}))
        return name

    def value(self, e: Any) -> str:
        if isinstance(e, E.ConstBool):
            return self.const(bool(e.value), "i1")
        if isinstance(e, E.ConstInt):
            return self.const(checked_int_constant(e), scalar_type(e.dtype).name)
        if isinstance(e, E.ConstFloat):
            return self.const(float(e.value), e.dtype.mlir)
        if isinstance(e, (int, float)) and not isinstance(e, bool):
            return self.const(e, "index" if isinstance(e, int) else "f32")
        if isinstance(e, E.Var):
            if e in self.values:
                return self.values[e]
            raise CompileError(f"'{e.name}' has no value in the generated code", getattr(e, "span", None))
        if isinstance(e, E.Cast):
            return self.cast(e)
        if isinstance(e, E.Neg):
            zero = self.value(E.ConstInt(0, e.dtype) if not e.dtype.is_float() else E.ConstFloat(0.0, e.dtype))
            return self.arith("Sub", zero, self.value(e.operand), e.dtype)
        if isinstance(e, E.BinaryExpr):
            return self.binary(e)
        raise CompileError(f"cannot lower expression {type(e).__name__} to PTO", getattr(e, "span", None))

    def binary(self, e: E.BinaryExpr) -> str:
        lt = e.left.type.dtype
        a, b = self.value(e.left), self.value(e.right)
        kind = type(e).__name__
        if kind not in CMP_INT:
            return self.arith(kind, a, b, e.dtype)
        name = self.new()
        op, predicate = ("arith.cmpf", CMP_FLOAT[kind]) if lt.is_float() else ("arith.cmpi", CMP_INT[kind])
        self.emit(_op(op, results=[name], result_types=[I1], operands=[a, b], operand_types=[scalar_type(lt)],
                      attrs={"predicate": predicate}))
        return name

    def arith(self, kind: str, a: str, b: str, dtype: DataType) -> str:
        table = ARITH_FLOAT if dtype.is_float() else ARITH_UINT if dtype.is_unsigned() else ARITH_INT
        if kind == "FloorMod" and not dtype.is_unsigned():
            return self.floor_mod(a, b, dtype)
        if kind not in table:
            raise CompileError(f"scalar operator {kind} on {dtype.name} has no PTO lowering")
        return self.arith_op(table[kind], a, b, scalar_type(dtype))

    def arith_op(self, op: str, a: str, b: str, ty: A.ScalarType, result: A.ScalarType | None = None,
                 attrs: dict | None = None) -> str:
        name = self.new()
        self.emit(_op(f"arith.{op}", results=[name], result_types=[result or ty], operands=[a, b], operand_types=[ty],
                      attrs=attrs or {}))
        return name

    def floor_mod(self, a: str, b: str, dtype: DataType) -> str:
        """Python's ``a % b`` (the sign of ``b``), as the compiler folds it and the host computes it;
        ``arith.remsi``/``remf`` have the sign of ``a`` (-7 % 3 would be -1, not 2). Integers:
        ``a - floordiv(a, b) * b``; floats: ``remf`` moved by ``b`` when it is non-zero and its sign is
        not ``b``'s."""
        ty = scalar_type(dtype)
        if not dtype.is_float():
            # x % -1 is 0 for every x, as x % 1: divide by 1 there, so that min % -1 gives Python's 0
            # instead of the quotient min // -1, which does not fit (a fault)
            minus_one, one = self.const(-1, ty.name), self.const(1, ty.name)
            is_minus_one = self.arith_op("cmpi", b, minus_one, ty, I1, {"predicate": "eq"})
            d = self.new()
            self.emit(_op("arith.select", results=[d], result_types=[ty], operands=[is_minus_one, one, b],
                          operand_types=[ty]))
            return self.arith_op("subi", a, self.arith_op("muli", self.arith_op("floordivsi", a, d, ty), d, ty), ty)
        r = self.arith_op("remf", a, b, ty)
        zero = self.const(0.0, ty.name)

        def cmp(pred: str, x: str) -> str:
            return self.arith_op("cmpf", x, zero, ty, I1, {"predicate": pred})

        moved = self.arith_op("andi", cmp("one", r), self.arith_op("xori", cmp("olt", r), cmp("olt", b), I1), I1)
        name = self.new()
        self.emit(_op("arith.select", results=[name], result_types=[ty], operands=[moved, self.arith_op("addf", r, b, ty), r],
                      operand_types=[ty]))
        return name

    def cast(self, e: E.Cast) -> str:
        src = e.operand.type.dtype
        dst = e.dtype
        v = self.value(e.operand)
        if scalar_type(src) == scalar_type(dst):
            return v
        name = self.new()
        if src.is_float() and dst.is_float():
            op = "extf" if dst.bits > src.bits else "truncf"
        elif src.is_float():
            op = "fptoui" if dst.is_unsigned() else "fptosi"
        elif dst.is_float():
            op = "uitofp" if src.is_unsigned() else "sitofp"
        elif DataType.INDEX in (src, dst):
            op = "index_cast"
        else:
            op = ("extui" if src.is_unsigned() else "extsi") if dst.bits > src.bits else "trunci"
        self.emit(_op(f"arith.{op}", results=[name], result_types=[scalar_type(dst)], operands=[v],
                      operand_types=[scalar_type(src)]))
        return name

    # ------------------------------------------------------------------ buffers and views
    def buf(self, v: Any) -> tuple[str, A.TileBufType]:
        if v in self.var_bufs:
            return self.var_bufs[v]
        t = v.type
        if not isinstance(t, TileType) or t.memref is None:
            raise CompileError(f"'{getattr(v, 'name', v)}' is not an allocated tile", getattr(v, "span", None))
        ty = tile_buf(t)
        if None in valid_dims(t):
            return self.dyn_buf(v, ty)
        key = (t.memref, ty)
        if key not in self.buffers:
            raise CompileError(f"no allocation for tile '{v.name}'", v.span)
        return self.buffers[key], ty

    def dyn_buf(self, v: Any, ty: A.TileBufType) -> tuple[str, A.TileBufType]:
        """The buffer of a tile whose valid shape is only known at run time (``v_row=?``/``v_col=?``).

        Its ``alloc_tile`` carries the ``valid_row``/``valid_col`` operands, so it is emitted where the
        tile is first used (its definition), after the scalars it needs; the cache is scoped to the
        enclosing region so a use in another region re-declares the buffer at the same address.
        """
        t = v.type
        vs = list(t.valid_shape)
        key = (t.memref, ty, tuple(id(d) for d in vs))
        if key in self.dyn_buffers:
            return self.dyn_buffers[key], ty
        rows_expr = vs[:-1] if len(vs) > 1 else []
        vr, vc = valid_dims(t)
        groups: dict[str, list[A.Operand]] = {}
        if t.memref.addr >= 0:
            groups["addr"] = [self.const(t.memref.addr, "i64")]
        if vr is None:
            rows = self.index_value(rows_expr[0])
            for d in rows_expr[1:]:
                rows = self.arith("Mul", rows, self.index_value(d), DataType.INDEX)
            groups["valid_row"] = [rows]
        if vc is None:
            groups["valid_col"] = [self.index_value(vs[-1])]
        name = self.new()
        self.emit(_op("pto.alloc_tile", results=[name], result_types=[ty], groups=groups))
        self.dyn_buffers[key] = name
        return name, ty

    def region(self, body: Any) -> list[A.Op]:
        """Generate a nested region and return its ops; buffers declared inside it are not visible
        after it."""
        saved_buffers, saved_ops = dict(self.dyn_buffers), self.ops
        self.ops = []
        self.block(body)
        ops, self.ops = self.ops, saved_ops
        self.dyn_buffers = saved_buffers
        return ops

    def view(self, v: Any) -> tuple[str, TensorType]:
        if getattr(v, "name", None) in self.shaped_views:  # tensor.as_shape: a second view of an argument
            return self.shaped_views[v.name]
        m = memref_of(v)
        if m is None or m not in self.views:
            raise CompileError(f"'{getattr(v, 'name', v)}' does not resolve to a tensor parameter", getattr(v, "span", None))
        return self.views[m]

    # ------------------------------------------------------------------ generation
    def signature(self) -> tuple[list[str], list[A.Type]]:
        """Argument names and types: a pointer per tensor, each scalar, then each dynamic dim."""
        names: list[str] = []
        types: list[A.Type] = []
        dyn: dict = {}
        for i, p in enumerate(self.func.params):
            if isinstance(p.type, TensorType):
                types.append(A.PtrType(p.type.dtype.mlir))
                for d in p.type.shape:
                    if isinstance(d, E.Var) and d not in dyn:
                        dyn[d] = None
            elif isinstance(p.type, ScalarType):
                types.append(scalar_type(p.type.dtype))
            else:
                raise CompileError(f"parameter '{p.name}' of type {type(p.type).__name__} is not allowed", p.span)
            names.append(f"%arg{i}")
            self.values[p] = f"%arg{i}"
        for d in dyn:
            if d not in self.values:
                self.values[d] = f"%arg{len(names)}"
                names.append(self.values[d])
                types.append(INDEX)
        return names, types

    def module(self) -> A.Module:
        func = self.func
        self.fifo, self.fifo_bases = fifo_layout(func)
        kind = "group" if self.fifo is not None else core_kind(func)
        names, types = self.signature()
        self.make_views()
        self.make_allocs()
        self.block(func.body)
        ops = self.const_ops + self.view_ops + self.alloc_ops + self.ops
        attrs = {"pto.kernel_kind": A.EnumAttr("kernel_kind", kind)}
        if self.fifo is not None:
            # a group kernel: its body is the cube section and the vector section (SplitSections)
            attrs = {}
            self.pipes = {}
        elif _has_aiv_lanes(func):
            # pl.split_aiv: the kernel runs on both AIVs of a core group, each in its lane
            # (get_subblock_idx 0 and 1): its code is the vector section of a group kernel whose
            # cube section is empty (pto-text-format §4.13; placement: one core group per block)
            if kind != "vector":
                raise CompileError(f"kernel '{func.name}' opens a pl.split_aiv region but computes on the cube; "
                                   "lane regions hold vector code", func.span)
            attrs = {}
            ops = [_section("cube", []), _section("vector", ops)]
        fn = A.Function(func.name, GENERATED, names, types, [], attrs, A.Region(ops=[*ops, _op("func.return")]))
        return A.Module("", [fn], {"pto.target_arch": self.arch})

    def generate(self) -> str:
        return print_module(self.module(), STYLE)

    def make_views(self) -> None:
        saved, self.ops = self.ops, []
        for i, p in enumerate(self.func.params):
            if not isinstance(p.type, TensorType):
                continue
            shape = [self.value(d) for d in p.type.shape]
            strides: list[A.Operand] = []
            acc: Any = 1
            dims = list(p.type.shape)
            for k, d in enumerate(reversed(dims)):
                strides.insert(0, self.const(acc, "index") if isinstance(acc, int) else acc)
                if k == len(dims) - 1:
                    break
                sd = static_int(d)
                if isinstance(acc, int) and sd is not None:
                    acc *= sd
                else:
                    lhs = self.const(acc, "index") if isinstance(acc, int) else acc
                    acc = self.arith("Mul", lhs, self.value(d), DataType.INDEX)
            name = self.new()
            self.emit(_op("pto.make_tensor_view", results=[name], result_types=[tensor_view_type(p.type)],
                          operands=[f"%arg{i}"], groups={"shape": shape, "strides": strides}))
            self.views[memref_of(p)] = (name, p.type)
        self.view_ops, self.ops = self.ops, saved

    def make_allocs(self) -> None:
        seen: dict = {}
        reshaped = {
            s.var for s in walk_stmts(self.func.body)
            if isinstance(s, St.AssignStmt) and isinstance(s.value, E.Call)
            and s.value.op.name in ("block.reshape", "block.transpose_view")
        }
        for v in defined_vars(self.func):
            m = memref_of(v)
            if v in reshaped:
                continue
            if isinstance(v.type, TileType) and m is not None and m.memory_space is not MemorySpace.DDR:
                if None in valid_dims(v.type):
                    continue  # declared where it is defined (dyn_buf)
                seen.setdefault((m, tile_buf(v.type)), v)
        popped = popped_memrefs(self.func)
        self.side_allocs: dict = {CUBE: [], VECTOR: []}
        for m, ty in sorted(seen, key=lambda k: (k[0].memory_space, k[0].id, str(k[1]))):
            if m in popped:
                continue  # the tile a pop returns is its FIFO slot (pop)
            name = self.new()
            groups = {"addr": [self.const(m.addr, "i64")]} if m.addr >= 0 else {}
            alloc = _op("pto.alloc_tile", results=[name], result_types=[ty], groups=groups)
            if self.fifo is not None:  # a group kernel: each section allocates its own core's tiles
                self.side_allocs[side_of_space(m.memory_space)].append(alloc)
            else:
                self.alloc_ops.append(alloc)
            self.buffers[(m, ty)] = name

    def block(self, body: Any) -> None:
        for s in stmt_list(body):
            self.stmt(s)

    def stmt(self, s: Any) -> None:
        outer, self.span = self.span, getattr(s, "span", None) or self.span
        try:
            self._stmt(s)
        finally:
            self.span = outer

    def _stmt(self, s: Any) -> None:
        if isinstance(s, St.AssignStmt):
            self.assign(s)
        elif isinstance(s, St.EvalStmt):
            if isinstance(s.expr, E.Call):
                self.op(s.expr, None, s)
        elif isinstance(s, St.ForStmt):
            self.for_stmt(s)
        elif isinstance(s, St.WhileStmt):
            self.while_stmt(s)
        elif isinstance(s, St.IfStmt):
            self.if_stmt(s)
        elif isinstance(s, (St.ReturnStmt, St.YieldStmt)):
            return
        elif isinstance(s, (St.SeqStmts, St.OpStmts)):
            self.block(s)
        elif isinstance(s, St.ScopeStmt) and s.scope_kind in (ScopeKind.CubeSection, ScopeKind.VectorSection):
            side = CUBE if s.scope_kind is ScopeKind.CubeSection else VECTOR
            saved, self.ops = self.ops, []
            self.fifo_pipes(side)
            setup = self.ops
            self.ops = saved
            self.emit(_section(side, setup + self.side_allocs[side] + self.region(s.body)))
        else:
            raise CompileError(f"{type(s).__name__} is not supported by the PTO backend", getattr(s, "span", None))

    # ------------------------------------------------------------------ cube <-> vector FIFOs
    def fifo_pipes(self, side: str) -> None:
        """A section's FIFO set-up (pto-text-format §4.13). The consumer of a direction reserves its
        slots right after its tiles (AllocateMemoryAddr checked they fit); the producer imports that
        buffer from the same function (the peer section). C2V is an explicit local-to-local pipe of
        ``C2V_SLOTS`` slots (``initialize_l2l_pipe``: each AIV keeps its half of a split tile); V2C is
        the group's pipe (``aic/aiv_initialize_pipe {dir_mask = 2}``)."""
        setup = self.fifo
        self.pipes: dict = {}
        for direction, space in ((fifo.C2V, "vec"), (fifo.V2C, "mat")):
            if direction not in self.fifo_bases:
                continue
            name = self.new()
            label = f"{direction}_fifo"
            consumer = VECTOR if direction == fifo.C2V else CUBE
            if side == consumer:
                attrs = {"name": label, "size": setup.reserve(direction),
                         "location": A.EnumAttr("address_space", space), "auto": False,
                         "base": self.fifo_bases[direction][1]}
                self.emit(_op("pto.reserve_buffer", results=[name], result_types=[I32], attrs=attrs))
            else:
                attrs = {"name": label, "peer_func": A.SymbolRef(self.func.name)}
                self.emit(_op("pto.import_reserved_buffer", results=[name], result_types=[I32], attrs=attrs))
            if direction == fifo.C2V:
                pipe = self.new()
                self.emit(_op("pto.initialize_l2l_pipe", results=[pipe], result_types=[PIPE], operands=[name],
                              operand_types=[I32], attrs={"dir_mask": 1, "slot_size": setup.slot_size[direction],
                                                          "slot_num": setup.slots(direction)}))
                self.pipes[direction] = pipe
            else:
                zero = self.const(0, "i32")
                groups = {"c2v_consumer_buf": [zero], "v2c_consumer_buf": [name]}
                self.emit(_op(f"pto.{'aic' if side == CUBE else 'aiv'}_initialize_pipe", groups=groups,
                              group_types={k: [I32] for k in groups},
                              attrs={"dir_mask": 2, "slot_size": setup.slot_size[direction]}))

    def push(self, call: E.Call, result: Any, s: Any) -> None:
        src, ty = self.buf(call.args[0])
        split = {"split": call.kwargs["split"]}
        if fifo.PUSHES[call.op.name] == fifo.C2V:
            self.emit(_op("pto.tpush", operands=[src, self.pipes[fifo.C2V]], operand_types=[ty, PIPE], attrs=split))
        else:
            self.emit(_op(f"pto.{isa.pto_name(call.op.name)}", operands=[src], operand_types=[ty], attrs=split))

    def pop(self, call: E.Call, result: Any, s: Any) -> None:
        """The popped tile is the slot: a new name for it, no buffer of its own. On the C2V pipe a
        ``declare_tile`` handle is bound by ``tpop``, and a valid region known only at run time is
        then set on it; the V2C pop returns the tile."""
        ty = tile_buf(result.type)
        name = self.new()
        split = {"split": call.kwargs["split"]}
        dims = [self.const(d, "index") if isinstance(d, int) else self.index_value(d) for d in valid_pair(result.type)]
        if fifo.POPS[call.op.name] == fifo.C2V:
            if ty.v_row is None or ty.v_col is None:  # set_validshape takes a ?x? tile
                ty = replace(ty, v_row=None, v_col=None)
            self.emit(_op("pto.declare_tile", results=[name], result_types=[ty]))
            self.emit(_op("pto.tpop", operands=[name, self.pipes[fifo.C2V]], operand_types=[ty, PIPE], attrs=split))
            if ty.v_row is None or ty.v_col is None:
                self.emit(_op("pto.set_validshape", operands=[name, *dims], operand_types=[ty]))
        else:
            operands = dims if ty.v_row is None or ty.v_col is None else []
            self.emit(_op(f"pto.{isa.pto_name(call.op.name)}", results=[name], result_types=[ty], operands=operands,
                          attrs=split))
        self.var_bufs[result] = (name, ty)

    def free(self, call: E.Call, result: Any, s: Any) -> None:
        split = {"split": call.kwargs["split"]}
        if call.op.name == fifo.FREES[fifo.C2V]:
            self.emit(_op("pto.tfree", operands=[self.pipes[fifo.C2V]], operand_types=[PIPE], attrs=split))
        else:
            self.emit(_op(f"pto.{isa.pto_name(call.op.name)}", attrs=split))

    def assign(self, s: St.AssignStmt) -> None:
        v, value = s.var, s.value
        if isinstance(value, E.Call) and not isinstance(value.op, E.GlobalVar):
            self.op(value, v, s)
        elif isinstance(value, E.Call):
            raise CompileError("calls to other functions are not supported inside a kernel", s.span)
        elif isinstance(v.type, ScalarType):
            self.values[v] = self.value(value)
        elif isinstance(value, E.Var) and value in self.values:
            self.values[v] = self.values[value]
        elif isinstance(value, E.Var) and value in self.var_bufs:  # another name of a popped FIFO tile
            self.var_bufs[v] = self.var_bufs[value]

    def _carried_scalars(self, s: Any) -> list[int]:
        return [i for i, ia in enumerate(s.iter_args) if isinstance(ia.type, ScalarType)]

    def for_stmt(self, s: St.ForStmt) -> None:
        step = static_int(s.step)
        down = step is not None and step < 0
        if down:
            # scf.for only counts up: run j over [0, start - stop) by -step and use i = start - j, which
            # visits start, start + step, ... while i > stop, exactly Python's range(start, stop, step).
            start = self.index_value(s.start)
            lo = self.value(E.ConstInt(0, DataType.INDEX))
            a, b = static_int(s.start), static_int(s.stop)
            hi = (self.const(a - b, "index") if a is not None and b is not None
                  else self.arith("Sub", start, self.index_value(s.stop), DataType.INDEX))
            st = self.value(E.ConstInt(-step, DataType.INDEX))
        else:  # the bounds of an index loop are index (pto-text-format §3.2): an INT32 or INT64 one is cast
            lo, hi, st = self.index_value(s.start), self.index_value(s.stop), self.index_value(s.step)
        lv = self.new()
        self.values[s.loop_var] = lv
        carried = self._carried_scalars(s)
        iter_names, inits, types = [], [], []
        for i in carried:
            ia = s.iter_args[i]
            name = self.new()
            self.values[ia] = name
            iter_names.append(name)
            inits.append(self.value(ia.init_value))
            types.append(scalar_type(ia.type.dtype))
        res = [self.new() for _ in carried]
        for i, r in zip(carried, res, strict=False):
            self.values[s.return_vars[i]] = r
        loop = _op("scf.for", results=res, result_types=types, operands=[lo, hi, st, *inits])
        self.emit(loop)
        saved, self.ops = self.ops, []
        if down:
            self.values[s.loop_var] = self.arith("Sub", start, lv, DataType.INDEX)
        body = self.ops + self.region(s.body)
        self.ops = saved
        body += self.yield_(s.body, carried, types)
        loop.regions = [A.Region([lv, *iter_names], [INDEX, *types], body)]

    def while_stmt(self, s: St.WhileStmt) -> None:
        """``scf.while`` (pto-text-format §3.2): the before region evaluates the condition on the carried
        scalars and passes them on with ``scf.condition``; the ``do`` region receives them as block
        arguments and yields the next values. Carried tiles live in their shared buffers.
        """
        carried = self._carried_scalars(s)
        types = [scalar_type(s.iter_args[i].type.dtype) for i in carried]
        inits = [self.value(s.iter_args[i].init_value) for i in carried]
        res = [self.new() for _ in carried]
        before = [self.new() for _ in carried]
        loop = _op("scf.while", results=res, result_types=types, operands=inits)
        self.emit(loop)
        for i, b in zip(carried, before, strict=False):
            self.values[s.iter_args[i]] = b
        saved_buffers, saved_ops = dict(self.dyn_buffers), self.ops
        self.ops = []
        cond = self.value(s.condition)
        self.emit(_op("scf.condition", operands=[cond, *before], operand_types=[I1, *types]))
        cond_ops, self.ops = self.ops, saved_ops
        self.dyn_buffers = saved_buffers
        after = [self.new() for _ in carried]
        for i, a in zip(carried, after, strict=False):
            self.values[s.iter_args[i]] = a
        body = self.region(s.body)
        body += self.yield_(s.body, carried, types) if carried else [_op("scf.yield")]
        loop.regions = [A.Region(before, types, cond_ops), A.Region(after, types, body)]
        for i, r in zip(carried, res, strict=False):
            self.values[s.return_vars[i]] = r

    def yield_(self, body: Any, carried: list[int], types: list[A.Type]) -> list[A.Op]:
        """The ``scf.yield`` of a region's carried scalars (none when nothing is carried), after the
        ops that compute the yielded values."""
        if not carried:
            return []
        stmts = stmt_list(body)
        y = stmts[-1] if stmts and isinstance(stmts[-1], St.YieldStmt) else None
        if y is None:
            raise CompileError("missing yield for loop-carried values")
        saved, self.ops = self.ops, []
        vals = [self.value(y.value[i]) for i in carried]
        self.emit(_op("scf.yield", operands=vals, operand_types=list(types)))
        ops, self.ops = self.ops, saved
        return ops

    def if_stmt(self, s: St.IfStmt) -> None:
        cond = self.value(s.condition)
        carried = [i for i, rv in enumerate(s.return_vars) if isinstance(rv.type, ScalarType)]
        types = [scalar_type(s.return_vars[i].type.dtype) for i in carried]
        res = [self.new() for _ in carried]
        for i, r in zip(carried, res, strict=False):
            self.values[s.return_vars[i]] = r
        branch = _op("scf.if", results=res, result_types=types, operands=[cond])
        self.emit(branch)
        then = self.region(s.then_body)
        branch.regions = [A.Region(ops=then + self.yield_(s.then_body, carried, types))]
        if s.else_body is not None:
            other = self.region(s.else_body)
            branch.regions.append(A.Region(ops=other + self.yield_(s.else_body, carried, types)))

    # ------------------------------------------------------------------ ops
    def operand(self, a: Any) -> tuple[str, A.Type]:
        t = getattr(a, "type", None)
        if isinstance(t, TileType):
            return self.buf(a)
        if isinstance(t, ScalarType):
            return self.value(a), scalar_type(t.dtype)
        raise CompileError(f"operand of type {type(t).__name__} cannot be an op input", getattr(a, "span", None))

    def dps(self, op: str, ins: list, out: Any, attrs: dict | None = None) -> None:
        vals = [self.operand(a) for a in ins]
        dst, dty = self.buf(out)
        forms = operand_forms(op, ins, out)
        vals = [v if f is None else self.as_form(v, f) for v, f in zip(vals, forms.ins, strict=True)]
        if forms.out is not None:
            dst, dty = self.as_form((dst, dty), forms.out)
        self.emit(_op(f"pto.{op}", ins=[v for v, _ in vals], in_types=[t for _, t in vals], outs=[dst],
                      out_types=[dty], attrs=dict(attrs or {}), is_dps=True))

    def as_form(self, val: tuple, form: TileType) -> tuple[str, A.TileBufType]:
        """An alias of tile ``val`` typed as ``form`` (:mod:`pypto.codegen.legal_forms`): a
        ``treshape``, and when the valid region is known only at run time a ``?x?`` alias whose
        region ``set_validshape`` sets."""
        name, ty = val
        new = tile_buf(form)
        if new.v_row is not None and new.v_col is not None:
            return self.retyped(name, ty, new)
        alias, aty = self.retyped(name, ty, replace(new, v_row=None, v_col=None))
        dims = [self.const(d, "index") if isinstance(d, int) else self.index_value(d) for d in valid_pair(form)]
        self.emit(_op("pto.set_validshape", operands=[alias, *dims], operand_types=[aty]))
        return alias, aty

    def retyped(self, name: str, ty: A.TileBufType, new: A.TileBufType) -> tuple[str, A.TileBufType]:
        alias = self.new()
        self.emit(_op("pto.treshape", results=[alias], result_types=[new], operands=[name], operand_types=[ty]))
        return alias, new

    def op(self, call: E.Call, result: Any, s: Any) -> None:
        name = call.op.name
        if name.startswith("system."):
            self.sync(call)
            return
        special = _SPECIAL.get(name)
        if special is not None:
            special(self, call, result, s)
        elif name == "block.move" and call.kwargs.get("transpose") and len(call.args[0].type.shape) == 2:
            self.transposed_move(call, result)
        elif name == "block.not" and call.args[0].type.dtype is DataType.UINT16:
            # tnot is defined on signed integers: run it on INT16 views of the same bytes
            (src, sty), (dst, dty) = (self.alias(v, DataType.INT16) for v in (call.args[0], result))
            self.emit(_op("pto.tnot", ins=[src], in_types=[sty], outs=[dst], out_types=[dty], is_dps=True))
        elif isa.pto_name(name) is not None:
            self.dps(isa.pto_name(name), list(call.args), result)
        else:
            raise CompileError(f"op '{name}' has no PTO lowering", s.span)

    def as_shape(self, call: E.Call, result: Any, s: Any) -> None:
        """``tensor.as_shape(x, shape)``: another ``make_tensor_view`` of argument ``x``'s pointer, with
        ``shape`` and its row-major strides (the same bytes; no data moves)."""
        src = call.args[0]
        index = next((i for i, p in enumerate(self.func.params) if p.name == src.name), None)
        if index is None:
            raise CompileError(f"tensor.as_shape: '{src.name}' is not an argument of the kernel", s.span)
        dims = [static_int(d) for d in result.type.shape]
        strides = [math.prod(dims[k + 1:]) for k in range(len(dims))]
        name = self.new()
        self.emit(_op("pto.make_tensor_view", results=[name], result_types=[tensor_view_type(result.type)],
                      operands=[f"%arg{index}"], groups={"shape": [self.const(d, "index") for d in dims],
                                                         "strides": [self.const(st, "index") for st in strides]}))
        self.shaped_views[result.name] = (name, result.type)

    def tensor_dim(self, call: E.Call, result: Any, s: Any) -> None:
        if result is not None:
            t = call.args[0].type
            self.values[result] = self.value(t.shape[static_int(call.args[1]) % len(t.shape)])

    def block_id(self, call: E.Call, result: Any, s: Any) -> None:
        """get_block_idx / get_block_num / get_subblock_idx: the instruction's i64, as an index."""
        raw, name = self.new(), self.new()
        op = "get_subblock_idx" if call.op.name == "block.get_aiv_lane" else call.op.name.split(".", 1)[1]
        self.emit(_op("pto." + op, results=[raw]))
        self.emit(_op("arith.index_cast", results=[name], result_types=[INDEX], operands=[raw],
                      operand_types=[A.ScalarType("i64")]))
        self.values[result] = name

    def lowered(self, call: E.Call, result: Any, s: Any) -> None:
        """An op whose instruction takes some of its arguments, in the lowering's order."""
        low = isa.lowering(call.op.name)
        self.dps(low.mnemonic, [call.args[i] for i in low.args], result)

    def cast_op(self, call: E.Call, result: Any, s: Any) -> None:
        mode = ROUND_MODES[call.kwargs.get("mode", 2)].upper()
        self.dps(isa.pto_name(call.op.name), [call.args[0]], result, {"rmode": A.EnumAttr("round_mode", mode)})

    def compare(self, call: E.Call, result: Any, s: Any) -> None:
        mode = CmpType(call.kwargs.get("cmp_type", 0)).name.lower()
        self.dps(isa.pto_name(call.op.name), list(call.args), result, {"cmpMode": A.EnumAttr("cmp", mode)})

    def with_scratch(self, call: E.Call, result: Any, s: Any) -> None:
        """Ops the compiler always gives a scratch tile (normalize): it must be there by now."""
        low = isa.lowering(call.op.name)
        if isa.scratch_arg(call.op.name) >= len(call.args):
            raise CompileError(f"{call.op.name} reached code generation without its scratch tile", call.span)
        args = list(call.args) if low.args is None else [call.args[i] for i in low.args]
        self.dps(low.mnemonic, args, result)

    def column_reduce(self, call: E.Call, result: Any, s: Any) -> None:
        axis = call.kwargs.get("axis", 0) % len(call.args[0].type.shape)
        if axis != 0:
            raise CompileError(f"{call.op.name} over axis {axis} must be lowered to a row reduction first", s.span)
        self.lowered(call, result, s)

    def reshape(self, call: E.Call, result: Any, s: Any = None) -> None:
        """``treshape`` re-types the source's bytes; the result variable then names that value."""
        src, sty = self.buf(call.args[0])
        dty = tile_buf(result.type)
        if sty == dty:
            self.var_bufs[result] = (src, sty)
            return
        if None in valid_dims(result.type):  # a run-time valid region: a ?x? alias and set_validshape
            self.var_bufs[result] = self.as_form((src, sty), result.type)
            return
        name = self.new()
        self.emit(_op("pto.treshape", results=[name], result_types=[dty], operands=[src], operand_types=[sty]))
        self.var_bufs[result] = (name, dty)

    def transposed_move(self, call: E.Call, result: Any) -> None:
        """``move(..., transpose=True)``: ``treshape`` to the transposed layout, then a plain ``tmov``.

        ``tmov`` cannot transpose, but a tile's bytes read through the layout with both orders flipped
        (rows/cols swapped, ``blayout`` and ``slayout`` each row<->col) are exactly its transpose: an
        NZ ``[R, C]`` Mat tile is the ZN ``[C, R]`` tile (the Right layout), an ND Vec tile the DN one
        (pto-text-format §5.2). The reinterpretation costs nothing; the ``tmov`` then re-lays the
        transposed values out as the destination requires.
        """
        src = call.args[0]
        sname, sty = self.buf(src)
        t = src.type
        view = t.view
        flip = {TileLayout.row_major: TileLayout.col_major, TileLayout.col_major: TileLayout.row_major,
                TileLayout.none_box: TileLayout.none_box}
        vs = tuple(t.valid_shape)
        tview = replace(view, valid_shape=(vs[1], vs[0]), blayout=flip[view.blayout], slayout=flip[view.slayout])
        tty = tile_buf(replace(t, shape=(t.shape[1], t.shape[0]), tile_view=tview))
        name = self.new()
        self.emit(_op("pto.treshape", results=[name], result_types=[tty], operands=[sname], operand_types=[sty]))
        dst, dty = self.buf(result)
        self.emit(_op("pto.tmov", ins=[name], in_types=[tty], outs=[dst], out_types=[dty], is_dps=True))

    def alias(self, v: Any, dtype: DataType) -> tuple[str, A.TileBufType]:
        """A treshape view of tile ``v`` with another element type of the same width."""
        src, sty = self.buf(v)
        ty = tile_buf(replace(v.type, dtype=dtype))
        name = self.new()
        self.emit(_op("pto.treshape", results=[name], result_types=[ty], operands=[src], operand_types=[sty]))
        return name, ty

    def sync(self, call: E.Call) -> None:
        short = call.op.name.split(".")[1]
        if short in ("sync_src", "sync_dst"):
            kw = call.kwargs
            args = [A.EnumAttr("pipe", PipeType(kw["set_pipe"]).cname), A.EnumAttr("pipe", PipeType(kw["wait_pipe"]).cname),
                    A.EnumAttr("event", f"EVENT_ID{kw['event_id']}")]
            self.emit(_op("pto.set_flag" if short == "sync_src" else "pto.wait_flag", attrs={"args": args}))
        else:
            pipe = {"bar_v": "PIPE_V", "bar_m": "PIPE_M", "bar_all": "PIPE_ALL"}[short]
            self.emit(_op("pto.barrier", attrs={"pipe": A.EnumAttr("pipe", pipe)}))

    def index_value(self, e: Any) -> str:
        t = getattr(e, "type", None)
        v = self.value(e)
        if isinstance(t, ScalarType) and scalar_type(t.dtype) != INDEX:
            name = self.new()
            self.emit(_op("arith.index_cast", results=[name], result_types=[INDEX], operands=[v],
                          operand_types=[scalar_type(t.dtype)]))
            return name
        return v

    def partition(self, tensor: Any, offsets: E.MakeTuple, sizes: list) -> tuple[str, A.PartitionViewType]:
        """A window of ``tensor``; a size that is an expression (a run-time valid dim) prints as ``?``."""
        view, tt = self.view(tensor)
        offs = [self.index_value(o) for o in offsets.elements]
        szs = [self.const(sz, "index") if isinstance(sz, int) else self.index_value(sz) for sz in sizes]
        name = self.new()
        pty = A.PartitionViewType(tuple(sz if isinstance(sz, int) else None for sz in sizes), tt.dtype.mlir)
        self.emit(_op("pto.partition_view", results=[name], result_types=[pty], operands=[view],
                      operand_types=[tensor_view_type(tt)], groups={"offsets": offs, "sizes": szs}))
        return name, pty

    def load(self, call: E.Call, result: Any, s: Any = None) -> None:
        vs = [_dim(d) for d in result.type.valid_shape]
        sizes = [1] * (len(call.args[1].elements) - len(vs)) + vs  # a lower-rank tile: unit leading dims
        p, pty = self.partition(call.args[0], call.args[1], sizes)
        dst, dty = self.buf(result)
        self.emit(_op("pto.tload", ins=[p], in_types=[pty], outs=[dst], out_types=[dty], is_dps=True))

    def store(self, call: E.Call, result: Any = None, s: Any = None) -> None:
        tile, out = call.args[0], call.args[2]
        rank = len(out.type.shape)
        vs = [_dim(d) for d in tile.type.valid_shape]
        sizes = [1] * (rank - len(vs)) + vs
        p, pty = self.partition(out, call.args[1], sizes)
        src, sty = self.buf(tile)
        attrs = {}
        if call.kwargs.get("atomic") is AtomicType.Add:
            attrs["atomicType"] = A.EnumAttr("atomic_type", "atomic_add")
        self.emit(_op("pto.tstore", ins=[src], in_types=[sty], outs=[p], out_types=[pty], is_dps=True,
                      attrs=attrs))


    # ------------------------------------------------------------------ jit-era data ops (ops.tile_data)
    def getval(self, call: E.Call, result: Any, s: Any) -> None:
        """``%v = pto.tgetval ins(%t, %off : TB, index) outs : T``."""
        (t, tty), off = self.buf(call.args[0]), self.index_value(call.args[1])
        name = self.new()
        self.emit(_op("pto.tgetval", results=[name], result_types=[scalar_type(result.type.dtype)], ins=[t, off],
                      in_types=[tty, INDEX], is_dps=True))
        self.values[result] = name

    def setval(self, call: E.Call, result: Any, s: Any) -> None:
        """``pto.tsetval ins(%off, %v : index, T) outs(%t : TB)``: the result is the same buffer."""
        off, (v, vty) = self.index_value(call.args[1]), self.operand(call.args[2])
        dst, dty = self.buf(result)
        self.emit(_op("pto.tsetval", ins=[off, v], in_types=[INDEX, vty], outs=[dst], out_types=[dty], is_dps=True))

    def pointer(self, tensor: Any) -> tuple[str, A.PtrType]:
        """The ``!pto.ptr`` argument behind a kernel tensor (a parameter or a name of its buffer)."""
        m = memref_of(tensor)
        for p in self.func.params:
            if isinstance(p.type, TensorType) and memref_of(p) is m:
                return self.values[p], A.PtrType(p.type.dtype.mlir)
        raise CompileError("a scalar GM access needs a tensor parameter of the kernel", getattr(tensor, "span", None))

    def read_gm(self, call: E.Call, result: Any, s: Any) -> None:
        ptr, pty = self.pointer(call.args[0])
        name = self.new()
        self.emit(_op("pto.load_scalar", results=[name], result_types=[scalar_type(result.type.dtype)],
                      operands=[ptr, self.index_value(call.args[1])], operand_types=[pty]))
        self.values[result] = name

    def write_gm(self, call: E.Call, result: Any, s: Any) -> None:
        ptr, pty = self.pointer(call.args[1])
        v, vty = self.operand(call.args[0])
        self.emit(_op("pto.store_scalar", operands=[v, ptr, self.index_value(call.args[2])],
                      operand_types=[pty, vty]))

    def gather_compare(self, call: E.Call, result: Any, s: Any) -> None:
        """``tgather`` compare form: one instruction with two outs, the indices and the counts; the
        call's result is one of them (``part``), its third argument receives the other."""
        src, k, other = call.args
        d, c = (result, other) if call.kwargs.get("part") == "indices" else (other, result)
        ins = [self.operand(src), self.operand(k)]
        (dn, dt), (cn, ct) = self.buf(d), self.buf(c)
        attrs = {"cmpMode": A.EnumAttr("cmp", call.kwargs.get("cmp_mode", "eq")),
                 "offset": int(call.kwargs.get("offset", 0))}
        self.emit(_op("pto.tgather", ins=[v for v, _ in ins], in_types=[t for _, t in ins], outs=[dn, cn],
                      out_types=[dt, ct], attrs=attrs, is_dps=True))

    def gather_mask(self, call: E.Call, result: Any, s: Any) -> None:
        """``tgather`` mask form; an ``output_dtype`` of another type gathers into a same-width alias."""
        src, sty = self.buf(call.args[0])
        dtype = call.args[0].type.dtype
        dst, dty = self.buf(result) if result.type.dtype is dtype else self.alias(result, dtype)
        attrs = {"maskPattern": A.EnumAttr("mask_pattern", call.kwargs["pattern"])}
        self.emit(_op("pto.tgather", ins=[src], in_types=[sty], outs=[dst], out_types=[dty], attrs=attrs,
                      is_dps=True))

    def merge_lists(self, call: E.Call, result: Any, s: Any) -> None:
        """``tmrgsort`` format 2, with ``{exhausted = true}`` when the merge stops at the first list that
        runs out (its executed-count out is not written: no op reads one, pto-text-format §2)."""
        self.dps("tmrgsort", list(call.args), result, {"exhausted": True} if call.kwargs.get("exhausted") else None)

    def arange(self, call: E.Call, result: Any, s: Any) -> None:
        """``tci``; a UINT32 row is written through an INT32 alias of its buffer (tci is signed only)."""
        dtype = isa.RETYPED["block.arange"].get(result.type.dtype, result.type.dtype)
        start, sty = self.operand(call.args[0])
        dst, dty = self.buf(result) if dtype is result.type.dtype else self.alias(result, dtype)
        attrs = {"descending": True} if call.kwargs.get("descending") else {}
        self.emit(_op("pto.tci", ins=[start], in_types=[sty], outs=[dst], out_types=[dty], attrs=attrs, is_dps=True))


def _nothing(gen: _FunctionGen, call: E.Call, result: Any, s: Any) -> None:
    """Ops that emit no instruction (their result is only a name for memory or a value)."""


# IR ops whose lowering is more than ``pto.<instr> ins(args) outs(result)``.
_SPECIAL = {
    "block.load": _FunctionGen.load,
    "block.store": _FunctionGen.store,
    "block.create_tile": _nothing,
    "block.set_validshape": _nothing,  # the result is another declaration of the same buffer
    "tensor.dim": _FunctionGen.tensor_dim,
    "tensor.as_shape": _FunctionGen.as_shape,
    "block.get_block_idx": _FunctionGen.block_id,
    "block.get_block_num": _FunctionGen.block_id,
    "block.get_subblock_idx": _FunctionGen.block_id,
    "block.get_aiv_lane": _FunctionGen.block_id,
    "block.full": _FunctionGen.lowered,
    "block.expands": _FunctionGen.lowered,
    "block.col_expand": _FunctionGen.lowered,
    "block.cast": _FunctionGen.cast_op,
    "block.cmp": _FunctionGen.compare,
    "block.cmps": _FunctionGen.compare,
    "block.sel": _FunctionGen.with_scratch,
    "block.sels": _FunctionGen.with_scratch,
    "block.rem": _FunctionGen.with_scratch,
    "block.rems": _FunctionGen.with_scratch,
    "block.transpose": _FunctionGen.with_scratch,
    "block.sum": _FunctionGen.column_reduce,
    "block.max": _FunctionGen.column_reduce,
    "block.min": _FunctionGen.column_reduce,
    "block.reshape": _FunctionGen.reshape,
    "block.getval": _FunctionGen.getval,
    "block.setval": _FunctionGen.setval,
    "block.read_gm": _FunctionGen.read_gm,
    "block.write_gm": _FunctionGen.write_gm,
    "block.extract": _FunctionGen.lowered,
    "block.fillpad_expand": _FunctionGen.lowered,
    "block.transpose_view": _FunctionGen.reshape,
    "block.gather_mask": _FunctionGen.gather_mask,
    "block.gather_cmp": _FunctionGen.gather_compare,
    "block.arange": _FunctionGen.arange,
    "block.mrgsort_lists": _FunctionGen.merge_lists,
    "block.tpush_to_aiv": _FunctionGen.push,
    "block.tpush_to_aic": _FunctionGen.push,
    "block.tpop_from_aic": _FunctionGen.pop,
    "block.tpop_from_aiv": _FunctionGen.pop,
    "block.tfree_from_aic": _FunctionGen.free,
    "block.tfree_from_aiv": _FunctionGen.free,
}


def _dim(d: Any) -> Any:
    """A window size: an int when static, else the scalar expression giving it at run time."""
    v = static_int(d)
    return d if v is None else v


class PTOCodegen:
    """``generate(program) -> {kernel name: .pto text}``; ``module(func)`` is the AST behind one text."""

    def __init__(self, target_arch: str = "a2a3"):
        self.target_arch = target_arch

    def generate(self, program: St.Program) -> dict[str, str]:
        return {f.name: self.generate_function(f) for f in kernels(program)}

    def generate_function(self, func: St.Function) -> str:
        return _FunctionGen(func, self.target_arch).generate()

    def module(self, func: St.Function) -> A.Module:
        return _FunctionGen(func, self.target_arch).module()

    def source_lines(self, func: St.Function, text: str) -> dict[int, Any]:
        """``{line of `text`: source span}`` for the ops of ``func``'s .pto, so that a fault the
        emulator reports at a line of the generated text can name the user's line instead. Empty
        when ``text`` is not what this generator prints for ``func`` (nothing is guessed)."""
        gen = _FunctionGen(func, self.target_arch)
        module = gen.module()
        if print_module(module, STYLE) != text:
            return {}
        lines: dict[int, Any] = {}
        for made, parsed in zip(_preorder(module), _preorder(parse_module(text)), strict=False):
            if made.name != parsed.name:
                return {}
            span = gen.op_spans.get(id(made))
            if span is not None and getattr(span, "line", 0) > 0:
                lines.setdefault(parsed.loc.line, span)
        return lines


def _preorder(module: A.Module) -> Iterator[A.Op]:
    def ops(region: A.Region) -> Iterator[A.Op]:
        for op in region.ops:
            yield op
            for r in op.regions:
                yield from ops(r)

    for fn in module.functions:
        yield from ops(fn.body)
