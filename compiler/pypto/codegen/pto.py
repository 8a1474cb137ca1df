"""PTO (MLIR text) code generation (seed 000, pto-text-format.md). Never mutates the IR.

Each kernel becomes one module: constants, tensor views, tile allocations (``addr`` from
AllocateMemoryAddr), then the body; ``scf.for``/``scf.if`` carry only scalar values (tiles and tensors
live in buffers/views shared through their MemRefs).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from pypto.codegen.common import core_kind, kernels, tile_dims, valid_dims
from pypto.dtype import DataType
from pypto.enums import ROUND_MODES, CmpType, MemorySpace, PipeType, TileLayout
from pypto.errors import CompileError
from pypto.ir import expr as E
from pypto.ir import stmt as St
from pypto.ir.expr import static_int
from pypto.ir.types import ScalarType, TensorType, TileType
from pypto.ir.visitor import stmt_list, walk_stmts
from pypto.ops import isa
from pypto.passes.analysis import defined_vars, memref_of

ARITH_INT = {
    "Add": "addi", "Sub": "subi", "Mul": "muli", "FloorDiv": "floordivsi", "FloorMod": "remsi", "Min": "minsi",
    "Max": "maxsi", "BitAnd": "andi", "BitOr": "ori", "BitXor": "xori", "And": "andi", "Or": "ori",
    "BitShiftLeft": "shli", "BitShiftRight": "shrsi",
}
ARITH_FLOAT = {"Add": "addf", "Sub": "subf", "Mul": "mulf", "FloatDiv": "divf", "FloorMod": "remf",
               "Min": "minimumf", "Max": "maximumf"}
CMP_INT = {"Eq": "eq", "Ne": "ne", "Lt": "slt", "Le": "sle", "Gt": "sgt", "Ge": "sge"}
CMP_FLOAT = {"Eq": "oeq", "Ne": "one", "Lt": "olt", "Le": "ole", "Gt": "ogt", "Ge": "oge"}
LAYOUT = {TileLayout.none_box: "none_box", TileLayout.row_major: "row_major", TileLayout.col_major: "col_major"}


def scalar_type(dtype: DataType) -> str:
    """MLIR type of a scalar value: ``index``, or a signless integer / float type."""
    if dtype is DataType.INDEX:
        return "index"
    if dtype.is_unsigned():
        return f"i{dtype.bits}"
    return dtype.mlir


def tile_buf(t: TileType) -> str:
    rows, cols = tile_dims(t)
    vr, vc = valid_dims(t)
    m = t.memref
    loc = m.memory_space.loc if m is not None else "vec"
    view = t.view
    return (
        f"!pto.tile_buf<loc={loc}, dtype={t.dtype.mlir}, rows={rows}, cols={cols}, "
        f"v_row={'?' if vr is None else vr}, v_col={'?' if vc is None else vc}, blayout={LAYOUT[view.blayout]}, "
        f"slayout={LAYOUT[view.slayout]}, fractal={view.fractal}, pad={int(view.pad)}>"
    )


def tensor_view_type(t: TensorType) -> str:
    return "!pto.tensor_view<" + "x".join("?" for _ in t.shape) + f"x{t.dtype.mlir}>"


class _FunctionGen:
    def __init__(self, func: St.Function, target_arch: str):
        self.func = func
        self.arch = target_arch
        self.counter = 0
        self.consts: dict = {}
        self.const_lines: list[str] = []
        self.view_lines: list[str] = []
        self.alloc_lines: list[str] = []
        self.body: list[str] = []
        self.indent = 2
        self.values: dict = {}
        self.views: dict = {}  # DDR memref -> (view name, tensor type)
        self.buffers: dict = {}  # (memref, tile_buf string) -> name
        self.var_bufs: dict = {}  # tile variable -> (name, type) for values made by treshape
        # (memref, tile_buf, valid dims) -> name for tiles with a run-time valid shape; scoped per region
        self.dyn_buffers: dict = {}

    def new(self) -> str:
        self.counter += 1
        return f"%{self.counter - 1}"

    def line(self, text: str) -> None:
        self.body.append("  " * self.indent + text)

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
            text = f"{name} = arith.constant {'true' if value else 'false'}"
        elif mlir in ("f16", "f32", "bf16"):
            text = f"{name} = arith.constant {float(value):.6e} : {mlir}"
        else:
            text = f"{name} = arith.constant {int(value)} : {mlir}"
        self.const_lines.append("    " + text)
        return name

    def value(self, e: Any) -> str:
        if isinstance(e, E.ConstBool):
            return self.const(bool(e.value), "i1")
        if isinstance(e, E.ConstInt):
            return self.const(int(e.value), scalar_type(e.dtype))
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
            lt = e.left.type.dtype
            a, b = self.value(e.left), self.value(e.right)
            kind = type(e).__name__
            if kind in CMP_INT:
                name = self.new()
                if lt.is_float():
                    self.line(f"{name} = arith.cmpf {CMP_FLOAT[kind]}, {a}, {b} : {scalar_type(lt)}")
                else:
                    self.line(f"{name} = arith.cmpi {CMP_INT[kind]}, {a}, {b} : {scalar_type(lt)}")
                return name
            return self.arith(kind, a, b, e.dtype)
        raise CompileError(f"cannot lower expression {type(e).__name__} to PTO", getattr(e, "span", None))

    def arith(self, kind: str, a: str, b: str, dtype: DataType) -> str:
        table = ARITH_FLOAT if dtype.is_float() else ARITH_INT
        if kind not in table:
            raise CompileError(f"scalar operator {kind} on {dtype.name} has no PTO lowering")
        name = self.new()
        self.line(f"{name} = arith.{table[kind]} {a}, {b} : {scalar_type(dtype)}")
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
        self.line(f"{name} = arith.{op} {v} : {scalar_type(src)} to {scalar_type(dst)}")
        return name

    # ------------------------------------------------------------------ buffers and views
    def buf(self, v: Any) -> tuple[str, str]:
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

    def dyn_buf(self, v: Any, ty: str) -> tuple[str, str]:
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
        clauses = []
        if t.memref.addr >= 0:
            clauses.append(f"addr = {self.const(t.memref.addr, 'i64')}")
        if vr is None:
            rows = self.index_value(rows_expr[0])
            for d in rows_expr[1:]:
                rows = self.arith("Mul", rows, self.index_value(d), DataType.INDEX)
            clauses.append(f"valid_row = {rows}")
        if vc is None:
            clauses.append(f"valid_col = {self.index_value(vs[-1])}")
        name = self.new()
        self.line(f"{name} = pto.alloc_tile {' '.join(clauses)} : {ty}")
        self.dyn_buffers[key] = name
        return name, ty

    def region(self, body: Any) -> None:
        """Generate a nested region; buffers declared inside it are not visible after it."""
        saved = dict(self.dyn_buffers)
        self.block(body)
        self.dyn_buffers = saved

    def view(self, v: Any) -> tuple[str, TensorType]:
        m = memref_of(v)
        if m is None or m not in self.views:
            raise CompileError(f"'{getattr(v, 'name', v)}' does not resolve to a tensor parameter", getattr(v, "span", None))
        return self.views[m]

    # ------------------------------------------------------------------ generation
    def generate(self) -> str:
        func = self.func
        kind = core_kind(func)
        sig = []
        dyn: dict = {}
        for i, p in enumerate(func.params):
            if isinstance(p.type, TensorType):
                sig.append(f"%arg{i}: !pto.ptr<{p.type.dtype.mlir}>")
                self.values[p] = f"%arg{i}"
                for d in p.type.shape:
                    if isinstance(d, E.Var) and d not in dyn:
                        dyn[d] = None
            elif isinstance(p.type, ScalarType):
                sig.append(f"%arg{i}: {scalar_type(p.type.dtype)}")
                self.values[p] = f"%arg{i}"
            else:
                raise CompileError(f"parameter '{p.name}' of type {type(p.type).__name__} is not allowed", p.span)
        n = len(func.params)
        for d in dyn:
            if d not in self.values:
                self.values[d] = f"%arg{n}"
                sig.append(f"%arg{n}: index")
                n += 1
        self.make_views()
        self.make_allocs()
        self.block(func.body)
        head = [
            f'module attributes {{pto.target_arch = "{self.arch}"}} {{',
            f"  func.func @{func.name}({', '.join(sig)})",
            f"      attributes {{pto.kernel_kind = #pto.kernel_kind<{kind}>}} {{",
        ]
        tail = ["    return", "  }", "}"]
        return "\n".join(head + self.const_lines + self.view_lines + self.alloc_lines + self.body + tail) + "\n"

    def make_views(self) -> None:
        saved, self.body = self.body, []
        for i, p in enumerate(self.func.params):
            if not isinstance(p.type, TensorType):
                continue
            shape = [self.value(d) for d in p.type.shape]
            strides: list[str] = []
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
            ty = tensor_view_type(p.type)
            self.line(
                f"{name} = pto.make_tensor_view %arg{i}, shape = [{', '.join(shape)}], "
                f"strides = [{', '.join(strides)}] : {ty}"
            )
            self.views[memref_of(p)] = (name, p.type)
        self.view_lines, self.body = self.body, saved

    def make_allocs(self) -> None:
        seen: dict = {}
        reshaped = {
            s.var for s in walk_stmts(self.func.body)
            if isinstance(s, St.AssignStmt) and isinstance(s.value, E.Call) and s.value.op.name == "block.reshape"
        }
        for v in defined_vars(self.func):
            m = memref_of(v)
            if v in reshaped:
                continue
            if isinstance(v.type, TileType) and m is not None and m.memory_space is not MemorySpace.DDR:
                if None in valid_dims(v.type):
                    continue  # declared where it is defined (dyn_buf)
                seen.setdefault((m, tile_buf(v.type)), v)
        for m, ty in sorted(seen, key=lambda k: (k[0].memory_space, k[0].id, k[1])):
            name = self.new()
            addr = f"addr = {self.const(m.addr, 'i64')} " if m.addr >= 0 else ""
            self.alloc_lines.append(f"    {name} = pto.alloc_tile {addr}: {ty}")
            self.buffers[(m, ty)] = name

    def block(self, body: Any) -> None:
        for s in stmt_list(body):
            self.stmt(s)

    def stmt(self, s: Any) -> None:
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
        else:
            raise CompileError(f"{type(s).__name__} is not supported by the PTO backend", getattr(s, "span", None))

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
        else:
            lo, hi, st = self.value(s.start), self.value(s.stop), self.value(s.step)
        lv = self.new()
        self.values[s.loop_var] = lv
        carried = self._carried_scalars(s)
        head = f"scf.for {lv} = {lo} to {hi} step {st}"
        results = ""
        if carried:
            inits = []
            types = []
            for i in carried:
                ia = s.iter_args[i]
                name = self.new()
                self.values[ia] = name
                inits.append(f"{name} = {self.value(ia.init_value)}")
                types.append(scalar_type(ia.type.dtype))
            head += f" iter_args({', '.join(inits)}) -> ({', '.join(types)})"
            res = [self.new() for _ in carried]
            results = ", ".join(res) + " = "
            for i, r in zip(carried, res, strict=False):
                self.values[s.return_vars[i]] = r
        self.line(results + head + " {")
        self.indent += 1
        if down:
            self.values[s.loop_var] = self.arith("Sub", start, lv, DataType.INDEX)
        self.region(s.body)
        self.yield_(s.body, carried, [scalar_type(s.iter_args[i].type.dtype) for i in carried])
        self.indent -= 1
        self.line("}")

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
        pairs = ", ".join(f"{b} = {v}" for b, v in zip(before, inits, strict=False))
        prefix = (", ".join(res) + " = ") if res else ""
        sig = ", ".join(types)
        self.line(f"{prefix}scf.while ({pairs}) : ({sig}) -> ({sig}) {{")
        self.indent += 1
        for i, b in zip(carried, before, strict=False):
            self.values[s.iter_args[i]] = b
        saved = dict(self.dyn_buffers)
        cond = self.value(s.condition)
        self.dyn_buffers = saved
        passed = f" {', '.join(before)} : {sig}" if carried else ""
        self.line(f"scf.condition({cond}){passed}")
        self.indent -= 1
        self.line("} do {")
        after = [self.new() for _ in carried]
        if carried:
            self.line("^bb0(" + ", ".join(f"{a}: {t}" for a, t in zip(after, types, strict=False)) + "):")
        self.indent += 1
        for i, a in zip(carried, after, strict=False):
            self.values[s.iter_args[i]] = a
        self.region(s.body)
        self.yield_(s.body, carried, types)
        if not carried:
            self.line("scf.yield")
        self.indent -= 1
        self.line("}")
        for i, r in zip(carried, res, strict=False):
            self.values[s.return_vars[i]] = r

    def yield_(self, body: Any, carried: list[int], types: list[str]) -> None:
        if not carried:
            return
        stmts = stmt_list(body)
        y = stmts[-1] if stmts and isinstance(stmts[-1], St.YieldStmt) else None
        if y is None:
            raise CompileError("missing yield for loop-carried values")
        vals = [self.value(y.value[i]) for i in carried]
        self.line(f"scf.yield {', '.join(vals)} : {', '.join(types)}")

    def if_stmt(self, s: St.IfStmt) -> None:
        cond = self.value(s.condition)
        carried = [i for i, rv in enumerate(s.return_vars) if isinstance(rv.type, ScalarType)]
        types = [scalar_type(s.return_vars[i].type.dtype) for i in carried]
        prefix = ""
        if carried:
            res = [self.new() for _ in carried]
            prefix = ", ".join(res) + " = "
            for i, r in zip(carried, res, strict=False):
                self.values[s.return_vars[i]] = r
        self.line(prefix + f"scf.if {cond}" + (f" -> ({', '.join(types)})" if types else "") + " {")
        self.indent += 1
        self.region(s.then_body)
        self.yield_(s.then_body, carried, types)
        self.indent -= 1
        if s.else_body is not None:
            self.line("} else {")
            self.indent += 1
            self.region(s.else_body)
            self.yield_(s.else_body, carried, types)
            self.indent -= 1
        self.line("}")

    # ------------------------------------------------------------------ ops
    def operand(self, a: Any) -> tuple[str, str]:
        t = getattr(a, "type", None)
        if isinstance(t, TileType):
            return self.buf(a)
        if isinstance(t, ScalarType):
            return self.value(a), scalar_type(t.dtype)
        raise CompileError(f"operand of type {type(t).__name__} cannot be an op input", getattr(a, "span", None))

    def dps(self, op: str, ins: list, out: Any, attr: str = "") -> None:
        vals = [self.operand(a) for a in ins]
        names = ", ".join(v for v, _ in vals)
        types = ", ".join(t for _, t in vals)
        dst, dty = self.buf(out)
        inner = f"{names} {attr} : {types}" if attr else f"{names} : {types}"
        self.line(f"pto.{op} ins({inner}) outs({dst} : {dty})")

    def op(self, call: E.Call, result: Any, s: Any) -> None:
        name = call.op.name
        ns, _, short = name.partition(".")
        if ns == "system":
            self.sync(call)
            return
        if name == "block.load":
            self.load(call, result)
        elif name == "block.store":
            self.store(call)
        elif name in ("block.create_tile", "tensor.dim"):
            if name == "tensor.dim" and result is not None:
                t = call.args[0].type
                self.values[result] = self.value(t.shape[static_int(call.args[1]) % len(t.shape)])
        elif name == "block.get_block_idx":
            raw = self.new()
            self.line(f"{raw} = pto.get_block_idx")
            self.values[result] = raw
        elif name in ("block.full", "block.expands"):
            self.dps(isa.pto_name(name), [call.args[1]], result)
        elif name == "block.cast":
            mode = ROUND_MODES[call.kwargs.get("mode", 2)].upper()
            self.dps(isa.pto_name(name), [call.args[0]], result, f"{{rmode = #pto<round_mode {mode}>}}")
        elif name in ("block.cmp", "block.cmps"):
            mode = CmpType(call.kwargs.get("cmp_type", 0)).name.lower()
            self.dps(isa.pto_name(name), list(call.args), result, f"{{cmpMode = #pto<cmp {mode}>}}")
        elif name == "block.sels":
            mask, data, scalar, tmp = self._with_scratch(call, 4)
            self.dps(isa.pto_name(name), [mask, data, tmp, scalar], result)
        elif name in ("block.sel", "block.rem", "block.rems"):
            self.dps(isa.pto_name(name), self._with_scratch(call, {"sel": 4, "rem": 3, "rems": 3}[short]), result)
        elif name in ("block.sum", "block.max", "block.min"):
            axis = call.kwargs.get("axis", 0) % len(call.args[0].type.shape)
            if axis != 0:
                raise CompileError(f"{name} over axis {axis} must be lowered to a row reduction first", s.span)
            self.dps(isa.pto_name(name), [call.args[0]], result)
        elif name == "block.col_expand":
            self.dps(isa.pto_name(name), [call.args[1]], result)
        elif name == "block.reshape":
            self.reshape(call, result)
        elif name == "block.move" and call.kwargs.get("transpose") and len(call.args[0].type.shape) == 2:
            self.transposed_move(call, result)
        elif name == "block.transpose":
            src, _, _, tmp = self._with_scratch(call, 4)
            self.dps(isa.pto_name(name), [src, tmp], result)
        elif name == "block.not" and call.args[0].type.dtype is DataType.UINT16:
            # tnot is defined on signed integers: run it on INT16 views of the same bytes
            src, dst = (self.alias(v, DataType.INT16) for v in (call.args[0], result))
            self.line(f"pto.tnot ins({src[0]} : {src[1]}) outs({dst[0]} : {dst[1]})")
        elif isa.pto_name(name) is not None:
            self.dps(isa.pto_name(name), list(call.args), result)
        else:
            raise CompileError(f"op '{name}' has no PTO lowering", s.span)

    @staticmethod
    def _with_scratch(call: E.Call, n: int) -> list:
        if len(call.args) != n:
            raise CompileError(f"{call.op.name} reached code generation without its scratch tile", call.span)
        return list(call.args)

    def reshape(self, call: E.Call, result: Any) -> None:
        """``treshape`` re-types the source's bytes; the result variable then names that value."""
        src, sty = self.buf(call.args[0])
        dty = tile_buf(result.type)
        if sty == dty:
            self.var_bufs[result] = (src, sty)
            return
        name = self.new()
        self.line(f"{name} = pto.treshape {src} : {sty} -> {dty}")
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
        self.line(f"{name} = pto.treshape {sname} : {sty} -> {tty}")
        dst, dty = self.buf(result)
        self.line(f"pto.tmov ins({name} : {tty}) outs({dst} : {dty})")

    def alias(self, v: Any, dtype: DataType) -> tuple[str, str]:
        """A treshape view of tile ``v`` with another element type of the same width."""
        src, sty = self.buf(v)
        ty = tile_buf(replace(v.type, dtype=dtype))
        name = self.new()
        self.line(f"{name} = pto.treshape {src} : {sty} -> {ty}")
        return name, ty

    def sync(self, call: E.Call) -> None:
        short = call.op.name.split(".")[1]
        if short in ("sync_src", "sync_dst"):
            kw = call.kwargs
            q, p = PipeType(kw["set_pipe"]).cname, PipeType(kw["wait_pipe"]).cname
            op = "set_flag" if short == "sync_src" else "wait_flag"
            self.line(f"pto.{op}[<{q}>, <{p}>, <EVENT_ID{kw['event_id']}>]")
        else:
            pipe = {"bar_v": "PIPE_V", "bar_m": "PIPE_M", "bar_all": "PIPE_ALL"}[short]
            self.line(f"pto.barrier <{pipe}>")

    def index_value(self, e: Any) -> str:
        t = getattr(e, "type", None)
        v = self.value(e)
        if isinstance(t, ScalarType) and scalar_type(t.dtype) != "index":
            name = self.new()
            self.line(f"{name} = arith.index_cast {v} : {scalar_type(t.dtype)} to index")
            return name
        return v

    def partition(self, tensor: Any, offsets: E.MakeTuple, sizes: list) -> tuple[str, str]:
        """A window of ``tensor``; a size that is an expression (a run-time valid dim) prints as ``?``."""
        view, tt = self.view(tensor)
        offs = [self.index_value(o) for o in offsets.elements]
        szs = [self.const(sz, "index") if isinstance(sz, int) else self.index_value(sz) for sz in sizes]
        name = self.new()
        dims = [str(sz) if isinstance(sz, int) else "?" for sz in sizes]
        pty = "!pto.partition_tensor_view<" + "x".join(dims) + f"x{tt.dtype.mlir}>"
        self.line(
            f"{name} = pto.partition_view {view}, offsets = [{', '.join(offs)}], sizes = [{', '.join(szs)}] "
            f": {tensor_view_type(tt)} -> {pty}"
        )
        return name, pty

    def load(self, call: E.Call, result: Any) -> None:
        sizes = [_dim(d) for d in result.type.valid_shape]
        p, pty = self.partition(call.args[0], call.args[1], sizes)
        dst, dty = self.buf(result)
        self.line(f"pto.tload ins({p} : {pty}) outs({dst} : {dty})")

    def store(self, call: E.Call) -> None:
        tile, out = call.args[0], call.args[2]
        rank = len(out.type.shape)
        vs = [_dim(d) for d in tile.type.valid_shape]
        sizes = [1] * (rank - len(vs)) + vs
        p, pty = self.partition(out, call.args[1], sizes)
        src, sty = self.buf(tile)
        self.line(f"pto.tstore ins({src} : {sty}) outs({p} : {pty})")


def _dim(d: Any) -> Any:
    """A window size: an int when static, else the scalar expression giving it at run time."""
    v = static_int(d)
    return d if v is None else v


class PTOCodegen:
    """``generate(program) -> {kernel name: .pto text}``."""

    def __init__(self, target_arch: str = "a2a3"):
        self.target_arch = target_arch

    def generate(self, program: St.Program) -> dict[str, str]:
        return {f.name: self.generate_function(f) for f in kernels(program)}

    def generate_function(self, func: St.Function) -> str:
        return _FunctionGen(func, self.target_arch).generate()
