"""``python_print``: IR -> DSL text (spec §5.8). Used for pass dumps; tile views are printed as comments."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from pypto.dtype import DataType
from pypto.enums import (
    ROUND_MODES,
    AtomicType,
    FunctionType,
    MemorySpace,
    ParamDirection,
    PipeType,
    ScopeKind,
)
from pypto.ir import expr as E
from pypto.ir import stmt as St
from pypto.ir.types import MemRef, ScalarType, TensorType, TileType, TupleType, UnknownType
from pypto.ir.visitor import stmt_list, walk

_BINOP = {
    "Add": "+", "Sub": "-", "Mul": "*", "FloatDiv": "/", "FloorDiv": "//", "FloorMod": "%", "Pow": "**",
    "Eq": "==", "Ne": "!=", "Lt": "<", "Le": "<=", "Gt": ">", "Ge": ">=", "And": "and", "Or": "or",
    "BitAnd": "&", "BitOr": "|", "BitXor": "^", "BitShiftLeft": "<<", "BitShiftRight": ">>",
}


class Printer:
    def __init__(self, prefix: str = "pl"):
        self.p = prefix
        self.lines: list[str] = []
        self.program_funcs: set[str] = set()

    # ------------------------------------------------------------------ types
    def type(self, t: Any) -> str:
        p = self.p
        if isinstance(t, ScalarType):
            return f"{p}.Scalar[{p}.{t.dtype.name}]"
        if isinstance(t, (TensorType, TileType)):
            kind = "Tensor" if isinstance(t, TensorType) else "Tile"
            parts = [self.shape(t.shape), f"{p}.{t.dtype.name}"]
            view = getattr(t, "tensor_view", None)
            if view is not None and view.layout is not None:
                parts.append(f"{p}.{view.layout.name}")
            if t.memref is not None:
                parts.append(self.memref(t.memref))
            return f"{p}.{kind}[{', '.join(parts)}]"
        if isinstance(t, TupleType):
            return "tuple[" + ", ".join(self.type(x) for x in t.types) + "]"
        if isinstance(t, UnknownType) or t is None:
            return "None"
        return type(t).__name__

    def memref(self, m: MemRef) -> str:
        return f"{self.p}.MemRef({self.p}.MemorySpace.{m.memory_space.name}, {m.addr}, {m.size}, {m.id})"

    def shape(self, shape: tuple) -> str:
        return "[" + ", ".join(self.expr(d) for d in shape) + "]"

    # ------------------------------------------------------------------ expressions
    def const(self, e: Any) -> str:
        """A constant: bare when its dtype is the literal's default, else ``pl.const(v, dtype)``."""
        p = self.p
        if isinstance(e, E.ConstBool):
            return str(e.value)
        if isinstance(e, E.ConstInt):
            if e.dtype in (DataType.INDEX, DataType.INT64):
                return str(e.value)
            return f"{p}.const({e.value}, {p}.{e.dtype.name})"
        text = repr(float(e.value))
        return text if e.dtype is DataType.FP32 else f"{p}.const({text}, {p}.{e.dtype.name})"

    def expr(self, e: Any) -> str:
        p = self.p
        if isinstance(e, (E.ConstBool, E.ConstInt, E.ConstFloat)):
            return self.const(e)
        if isinstance(e, E.Var):
            return e.name
        if isinstance(e, E.MakeTuple):
            return "[" + ", ".join(self.expr(x) for x in e.elements) + "]"
        if isinstance(e, E.TupleGetItemExpr):
            return f"{self.expr(e.tuple)}[{e.index}]"
        if isinstance(e, E.Cast):
            return f"{p}.cast({self.expr(e.operand)}, {p}.{e.dtype.name})"
        if isinstance(e, E.Neg):
            return f"-{self._atom(e.operand)}"
        if isinstance(e, (E.Not, E.BitNot)):
            return f"not {self._atom(e.operand)}"
        if isinstance(e, E.Abs):
            return f"abs({self.expr(e.operand)})"
        if isinstance(e, (E.Min, E.Max)):
            name = "min" if isinstance(e, E.Min) else "max"
            return f"{p}.{name}({self.expr(e.left)}, {self.expr(e.right)})"
        if isinstance(e, E.BinaryExpr):
            return f"{self._atom(e.left)} {_BINOP[type(e).__name__]} {self._atom(e.right)}"
        if isinstance(e, E.Call):
            return self.call(e)
        if isinstance(e, (int, float, bool, str)):
            return repr(e)
        return f"<{type(e).__name__}>"

    def _atom(self, e: Any) -> str:
        s = self.expr(e)
        return f"({s})" if isinstance(e, E.BinaryExpr) and not isinstance(e, (E.Min, E.Max)) else s

    def kwarg(self, key: str, v: Any) -> str:
        p = self.p
        if isinstance(v, DataType):
            return f"{p}.{v.name}"
        if isinstance(v, MemorySpace):
            return f"{p}.MemorySpace.{v.name}"
        if isinstance(v, AtomicType):
            return f"{p}.AtomicType.{v.name}"
        if key in ("set_pipe", "wait_pipe"):
            return f"{p}.PipeType.{PipeType(v).name}"
        if key == "mode" and isinstance(v, int):
            return repr(ROUND_MODES[v])
        return repr(v)

    def call(self, c: E.Call) -> str:
        args = [self.expr(a) for a in c.args]
        if c.op.name == "block.full" and len(args) == 2:
            # the DSL's full(shape, dtype, value) takes dtype second: name the value so the text re-parses
            args[1] = f"value={args[1]}"
        args += [f"{k}={self.kwarg(k, v)}" for k, v in c.kwargs.items()]
        if isinstance(c.op, E.GlobalVar):
            prefix = "self." if c.op.name in self.program_funcs else ""
            return f"{prefix}{c.op.name}({', '.join(args)})"
        ns, _, name = c.op.name.partition(".")
        for suffix in ("_scalar", "_tile"):
            name = name.removesuffix(suffix)
        if name in ("and", "or", "not", "xor") and ns == "block":
            name += "_"
        return f"{self.p}.{ns}.{name}({', '.join(args)})"

    # ------------------------------------------------------------------ statements
    def emit(self, indent: int, text: str) -> None:
        self.lines.append("    " * indent + text)

    def body(self, body: Any, indent: int, yield_names: tuple = ()) -> None:
        stmts = stmt_list(body)
        if not stmts:
            self.emit(indent, "pass")
        i = 0
        while i < len(stmts):
            n = self.unpacked(stmts, i, indent)
            if n:
                i += n
                continue
            self.stmt(stmts[i], indent, yield_names)
            i += 1

    def unpacked(self, stmts: list, i: int, indent: int) -> int:
        """Print ``a, b = call(...)`` for a tuple-valued assignment followed by one ``TupleGetItem``
        per element (how the parser lowers tuple unpacking); returns the statements consumed (0: none).
        Python annotations cannot declare a tuple variable, so this is the only re-parsable form."""
        s = stmts[i]
        if not (isinstance(s, St.AssignStmt) and isinstance(s.var.type, TupleType)):
            return 0
        n = len(s.var.type.types)
        rest = stmts[i + 1:i + 1 + n]
        if len(rest) != n or not all(
            isinstance(r, St.AssignStmt) and isinstance(r.value, E.TupleGetItemExpr) and r.value.tuple is s.var
            and r.value.index == k for k, r in enumerate(rest)
        ):
            return 0
        self.emit(indent, f"{', '.join(r.var.name for r in rest)} = {self.expr(s.value)}")
        return n + 1

    def spmd_launch(self, s: Any, indent: int) -> bool:
        """Print a kernel call launched as SPMD blocks as the dispatch form of ``pl.spmd`` (which
        re-parses to the same call); False when ``s`` is no such call."""
        launched = s.value if isinstance(s, St.AssignStmt) else s.expr if isinstance(s, St.EvalStmt) else None
        if not (isinstance(launched, E.Call) and "blocks" in launched.kwargs):
            return False
        self.emit(indent, f"with {self.p}.spmd({launched.kwargs['blocks']}):")
        call = replace(launched, kwargs={k: v for k, v in launched.kwargs.items() if k != "blocks"})
        self.stmt(replace(s, value=call) if isinstance(s, St.AssignStmt) else replace(s, expr=call), indent + 1)
        return True

    def stmt(self, s: Any, indent: int, yield_names: tuple = ()) -> None:
        if self.spmd_launch(s, indent):
            return
        if isinstance(s, St.AssignStmt):
            self.emit(indent, f"{s.var.name}: {self.type(s.var.type)} = {self.expr(s.value)}")
        elif isinstance(s, St.EvalStmt):
            self.emit(indent, self.expr(s.expr))
        elif isinstance(s, St.ReturnStmt):
            vals = ", ".join(self.expr(v) for v in s.value)
            self.emit(indent, f"return {vals}".rstrip())
        elif isinstance(s, St.YieldStmt):
            vals = ", ".join(self.expr(v) for v in s.value)
            if len(yield_names) == 1:
                self.emit(indent, f"{yield_names[0].name}: {self.type(yield_names[0].type)} = {self.p}.yield_({vals})")
            elif yield_names:
                self.emit(indent, f"{', '.join(v.name for v in yield_names)} = {self.p}.yield_({vals})")
            else:
                self.emit(indent, f"{self.p}.yield_({vals})")
        elif isinstance(s, St.ForStmt):
            self.for_stmt(s, indent)
        elif isinstance(s, St.WhileStmt) and not s.iter_args:
            # a natural while (before SSA conversion): no carried values, so plain Python syntax
            self.emit(indent, f"while {self.expr(s.condition)}:")
            self.body(s.body, indent + 1, s.return_vars)
        elif isinstance(s, St.WhileStmt):
            names = ", ".join(a.name for a in s.iter_args)
            inits = ", ".join(self.expr(a.init_value) for a in s.iter_args)
            self.emit(indent, f"for ({names},) in {self.p}.while_(init_values=({inits},)):")
            self.emit(indent + 1, f"{self.p}.cond({self.expr(s.condition)})")
            self.body(s.body, indent + 1, s.return_vars)
        elif isinstance(s, St.IfStmt):
            self.emit(indent, f"if {self.expr(s.condition)}:")
            self.body(s.then_body, indent + 1, s.return_vars)
            if s.else_body is not None:
                self.emit(indent, "else:")
                self.body(s.else_body, indent + 1, s.return_vars)
        elif isinstance(s, St.ScopeStmt):
            self.scope_stmt(s, indent)
        elif isinstance(s, (St.SeqStmts, St.OpStmts)):
            self.body(s, indent, yield_names)
        else:
            self.emit(indent, f"# <{type(s).__name__}>")

    def scope_stmt(self, s: St.ScopeStmt, indent: int) -> None:
        """``with pl.incore():``; a named region as ``pl.at(..., name_hint=)``, SPMD blocks inside ``pl.spmd``."""
        if s.scope_kind in (ScopeKind.CubeSection, ScopeKind.VectorSection):
            side = "cube" if s.scope_kind is ScopeKind.CubeSection else "vector"
            self.emit(indent, f"with {self.p}.section({side!r}):  # the {side} section of a group kernel")
            self.body(s.body, indent + 1)
            return
        if s.blocks is not None:
            self.emit(indent, f"with {self.p}.spmd({s.blocks}):")
            indent += 1
        if s.name_hint:
            self.emit(indent, f"with {self.p}.at(level={self.p}.Level.CORE_GROUP, name_hint={s.name_hint!r}):")
        else:
            self.emit(indent, f"with {self.p}.{'incore' if s.scope_kind == 0 else 'auto_incore'}():")
        self.body(s.body, indent + 1)

    def for_stmt(self, s: St.ForStmt, indent: int) -> None:
        start, stop, step = self.expr(s.start), self.expr(s.stop), self.expr(s.step)
        if step != "1":
            rng = f"{start}, {stop}, {step}"
        elif start != "0":
            rng = f"{start}, {stop}"
        else:
            rng = stop
        helper = {0: "range", 1: "parallel", 2: "unroll"}[int(s.kind)]
        if s.power2 is not None:
            helper = "parallel_for_power2"
            rng = f"{stop}, min_chunk={s.power2[0]}, max_chunk={s.power2[1]}"
        if s.iter_args:
            inits = ", ".join(self.expr(a.init_value) for a in s.iter_args)
            names = ", ".join(a.name for a in s.iter_args)
            rng += f", init_values=({inits},)"
            target = f"{s.loop_var.name}, ({names},)"
        else:
            target = s.loop_var.name
        if s.chunk_size is not None:
            rng += f", chunk={self.expr(s.chunk_size)}"
        self.emit(indent, f"for {target} in {self.p}.{helper}({rng}):")
        self.body(s.body, indent + 1, s.return_vars)

    # ------------------------------------------------------------------ functions / programs
    def dynamic_dims(self, funcs: list, indent: int) -> None:
        """``M = pl.dynamic("M")`` for each dynamic dim of the signatures, so the text re-parses."""
        seen: dict = {}
        for f in funcs:
            for t in [v.type for v in f.params] + list(f.return_types):
                for d in getattr(t, "shape", ()):
                    if isinstance(d, E.Var) and not any(d is p for p in f.params):
                        seen.setdefault(d.name, d)
        for name in seen:
            self.emit(indent, f'{name} = {self.p}.dynamic("{name}")')
        if seen:
            self.emit(indent, "")
            self.emit(indent, "")

    def function(self, f: St.Function, indent: int, method: bool) -> None:
        if not method:
            self.dynamic_dims([f], indent)
        deco = f"@{self.p}.function"
        if f.type is not FunctionType.Opaque:
            deco += f"(type={self.p}.FunctionType.{f.type.name})"
        self.emit(indent, deco)
        params = ["self"] if method else []
        for v, d in zip(f.params, f.param_directions, strict=False):
            t = self.type(v.type)
            if d is not ParamDirection.In:
                t = f"{self.p}.{d.name}[{t}]"
            params.append(f"{v.name}: {t}")
        ret = ""
        if len(f.return_types) == 1:
            ret = f" -> {self.type(f.return_types[0])}"
        elif f.return_types:
            ret = " -> tuple[" + ", ".join(self.type(t) for t in f.return_types) + "]"
        self.emit(indent, f"def {f.name}({', '.join(params)}){ret}:")
        self.body(f.body, indent + 1)

    def program(self, prog: St.Program) -> None:
        self.program_funcs = {f.name for f in prog.functions_list}
        self.emit(0, f"# pypto.program: {prog.name}")
        self.emit(0, "import pypto.language as pl" if self.p == "pl" else f"from pypto import language as {self.p}")
        self.emit(0, "")
        self.emit(0, "")
        self.dynamic_dims(list(prog.functions_list), 0)
        self.emit(0, f"@{self.p}.program")
        self.emit(0, f"class {prog.name}:")
        for i, f in enumerate(_callees_first(prog)):
            if i:
                self.emit(0, "")
            self.function(f, 1, True)


def _callees_first(prog: St.Program) -> list:
    funcs = {f.name: f for f in prog.functions_list}
    order: list = []
    seen: set = set()

    def visit(f: St.Function) -> None:
        if f.name in seen:
            return
        seen.add(f.name)
        for n in walk(f.body):
            if isinstance(n, E.Call) and isinstance(n.op, E.GlobalVar) and n.op.name in funcs:
                visit(funcs[n.op.name])
        order.append(f)

    for f in prog.functions_list:
        visit(f)
    return order


def python_print(node: Any, prefix: str = "pl") -> str:
    pr = Printer(prefix)
    if isinstance(node, St.Program):
        pr.program(node)
    elif isinstance(node, St.Function):
        pr.function(node, 0, False)
    elif isinstance(node, St.Stmt):
        pr.stmt(node, 0)
    elif isinstance(node, E.Expr):
        return pr.expr(node)
    else:
        return pr.type(node)
    return "\n".join(pr.lines) + "\n"
