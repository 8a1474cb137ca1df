"""``IRBuilder``: construct IR programmatically (spec §5.7, seed 004)."""

from __future__ import annotations

import inspect
from contextlib import contextmanager
from typing import Any

from pypto.enums import ForKind, FunctionType, ParamDirection, ScopeKind, TileLayout, TilePad
from pypto.errors import UNKNOWN_SPAN, CompileError, Span
from pypto.ir import expr as E
from pypto.ir import stmt as St
from pypto.ir.expr import as_expr
from pypto.ir.types import MemRef, TensorType, TensorView, TileType, TileView, type_kind


def _caller_span(depth: int = 2) -> Span:
    frame = inspect.currentframe()
    for _ in range(depth + 1):
        frame = frame.f_back if frame is not None else None
    if frame is None:
        return UNKNOWN_SPAN
    return Span(frame.f_code.co_filename, frame.f_lineno, 1)


class FunctionFrame:
    def __init__(self, name: str, span: Span, ftype: FunctionType):
        self.name, self.span, self.type = name, span, ftype
        self.params: list = []
        self.return_types: list = []
        self.result: St.Function | None = None

    def param(self, name: str, type: Any, span: Span | None = None,
              direction: ParamDirection = ParamDirection.In) -> E.Var:
        v = E.Var(name, type, span or _caller_span(1))
        self.params.append((v, direction))
        return v

    def return_type(self, type: Any) -> None:
        self.return_types.append(type)

    def get_result(self) -> St.Function:
        if self.result is None:
            raise CompileError("the function is not finished yet (leave the 'with' block first)")
        return self.result


class LoopFrame:
    def __init__(self, span: Span):
        self.span = span
        self.iter_args: list = []
        self.return_vars: list = []
        self.condition: Any = None
        self.result: Any = None

    def iter_arg(self, name: str, init_value: Any, type: Any = None) -> E.IterArg:
        init = as_expr(init_value)
        ia = E.IterArg(name, type or init.type, self.span, init)
        self.iter_args.append(ia)
        return ia

    def return_var(self, name: str, type: Any = None) -> E.Var:
        t = type or (self.iter_args[len(self.return_vars)].type if len(self.return_vars) < len(self.iter_args) else None)
        v = E.Var(name, t, self.span)
        self.return_vars.append(v)
        return v

    def set_condition(self, expr: Any) -> None:
        self.condition = expr

    def output(self, i: int = 0) -> E.Var:
        return self.return_vars[i]

    def outputs(self) -> list:
        return list(self.return_vars)

    def get_result(self) -> Any:
        return self.result


class IfFrame(LoopFrame):
    def __init__(self, span: Span, builder: IRBuilder):
        super().__init__(span)
        self.builder = builder
        self.then_stmts: list | None = None

    def else_(self) -> None:
        self.then_stmts = self.builder._blocks[-1]
        self.builder._blocks[-1] = []


class ProgramFrame:
    def __init__(self, name: str, span: Span):
        self.name, self.span = name, span
        self.functions: list = []
        self.gvs: dict = {}
        self.result: St.Program | None = None

    def declare_function(self, name: str) -> E.GlobalVar:
        return self.gvs.setdefault(name, E.GlobalVar(name))

    def get_global_var(self, name: str) -> E.GlobalVar | None:
        return self.gvs.get(name)

    def add_function(self, fn: St.Function) -> None:
        self.declare_function(fn.name)
        self.functions.append(fn)

    def get_result(self) -> St.Program:
        if self.result is None:
            raise CompileError("the program is not finished yet")
        return self.result


class IRBuilder:
    def __init__(self) -> None:
        self._blocks: list[list] = []
        self._contexts: list = []
        self._programs: list[ProgramFrame] = []

    # ------------------------------------------------------------------ queries
    def in_function(self) -> bool:
        return any(isinstance(c, FunctionFrame) for c in self._contexts)

    def in_loop(self) -> bool:
        return any(type(c) is LoopFrame for c in self._contexts)

    def in_if(self) -> bool:
        return any(isinstance(c, IfFrame) for c in self._contexts)

    def _emit(self, stmt: St.Stmt) -> None:
        if not self._blocks:
            raise CompileError("statements can only be emitted inside a function")
        self._blocks[-1].append(stmt)

    # ------------------------------------------------------------------ contexts
    @contextmanager
    def function(self, name: str, span: Span | None = None, type: FunctionType = FunctionType.Opaque):
        if self.in_function():
            raise CompileError("functions cannot nest")
        frame = FunctionFrame(name, span or _caller_span(2), type)
        self._contexts.append(frame)
        self._blocks.append([])
        try:
            yield frame
        finally:
            stmts = self._blocks.pop()
            self._contexts.pop()
        frame.result = St.Function(
            name, tuple(frame.params), tuple(frame.return_types), St.SeqStmts(tuple(stmts), frame.span),
            frame.span, type,
        )
        if self._programs:
            self._programs[-1].add_function(frame.result)

    @contextmanager
    def for_loop(self, loop_var: E.Var, start: Any, stop: Any, step: Any = 1, span: Span | None = None,
                 kind: ForKind = ForKind.Sequential, chunk_size: Any = None, chunk_policy: str = "leading_full",
                 loop_origin: int = 0):
        frame = LoopFrame(span or _caller_span(2))
        self._contexts.append(frame)
        self._blocks.append([])
        try:
            yield frame
        finally:
            stmts = self._blocks.pop()
            self._contexts.pop()
        stmt = St.ForStmt(
            loop_var, as_expr(start), as_expr(stop), as_expr(step), tuple(frame.iter_args),
            St.SeqStmts(tuple(stmts), frame.span), tuple(frame.return_vars), frame.span, kind,
            as_expr(chunk_size) if chunk_size is not None else None, 0, loop_origin,
        )
        frame.result = stmt
        self._emit(stmt)

    @contextmanager
    def while_loop(self, condition: Any = None, span: Span | None = None):
        frame = LoopFrame(span or _caller_span(2))
        frame.condition = condition
        self._contexts.append(frame)
        self._blocks.append([])
        try:
            yield frame
        finally:
            stmts = self._blocks.pop()
            self._contexts.pop()
        stmt = St.WhileStmt(frame.condition, tuple(frame.iter_args), St.SeqStmts(tuple(stmts), frame.span),
                            tuple(frame.return_vars), frame.span)
        frame.result = stmt
        self._emit(stmt)

    @contextmanager
    def if_stmt(self, condition: Any, span: Span | None = None):
        frame = IfFrame(span or _caller_span(2), self)
        self._contexts.append(frame)
        self._blocks.append([])
        try:
            yield frame
        finally:
            stmts = self._blocks.pop()
            self._contexts.pop()
        if frame.then_stmts is None:
            then_b, else_b = St.SeqStmts(tuple(stmts), frame.span), None
        else:
            then_b = St.SeqStmts(tuple(frame.then_stmts), frame.span)
            else_b = St.SeqStmts(tuple(stmts), frame.span)
        stmt = St.IfStmt(condition, then_b, else_b, tuple(frame.return_vars), frame.span)
        frame.result = stmt
        self._emit(stmt)

    @contextmanager
    def scope(self, kind: ScopeKind = ScopeKind.InCore, span: Span | None = None):
        self._blocks.append([])
        try:
            yield
        finally:
            stmts = self._blocks.pop()
        self._emit(St.ScopeStmt(kind, St.SeqStmts(tuple(stmts)), span or _caller_span(2)))

    @contextmanager
    def program(self, name: str, span: Span | None = None):
        frame = ProgramFrame(name, span or _caller_span(2))
        self._programs.append(frame)
        try:
            yield frame
        finally:
            self._programs.pop()
        frame.result = St.Program(tuple(frame.functions), name, frame.span, dict(frame.gvs))

    # ------------------------------------------------------------------ statements
    def var(self, name: str, type: Any) -> E.Var:
        return E.Var(name, type, _caller_span(1))

    def let(self, name: str, value: Any, type: Any = None) -> E.Var:
        value = as_expr(value)
        t = value.type
        if type is not None:
            if type_kind(type) != type_kind(t):
                raise CompileError(f"let '{name}': type override must be a {type_kind(t)}", _caller_span(1))
            t = type
        v = E.Var(name, t, _caller_span(1))
        self._emit(St.AssignStmt(v, value, v.span))
        return v

    def assign(self, var: E.Var, value: Any) -> None:
        self._emit(St.AssignStmt(var, as_expr(value), _caller_span(1)))

    def eval_stmt(self, expr: Any) -> None:
        self._emit(St.EvalStmt(expr, _caller_span(1)))

    def emit(self, stmt_or_expr: Any) -> None:
        if isinstance(stmt_or_expr, St.Stmt):
            self._emit(stmt_or_expr)
        else:
            self._emit(St.EvalStmt(stmt_or_expr, _caller_span(1)))

    def return_stmt(self, values: Any = None) -> None:
        if values is None:
            vals: tuple = ()
        elif isinstance(values, (list, tuple)):
            vals = tuple(values)
        else:
            vals = (values,)
        self._emit(St.ReturnStmt(vals, _caller_span(1)))

    def make_tuple(self, elements: list) -> E.MakeTuple:
        return E.MakeTuple(tuple(as_expr(e) for e in elements), _caller_span(1))

    # ------------------------------------------------------------------ type helpers
    def memref(self, space: Any, addr: int, size: int, id: int) -> MemRef:
        return MemRef(space, addr, size, id)

    def tile_view(self, valid_shape: Any = (), stride: Any = (), start_offset: Any = None,
                  blayout: TileLayout = TileLayout.row_major, slayout: TileLayout = TileLayout.none_box,
                  fractal: int = 512, pad: TilePad = TilePad.null) -> TileView:
        return TileView(tuple(valid_shape), tuple(stride), start_offset, blayout, slayout, fractal, pad)

    def tensor_view(self, stride: Any = (), layout: Any = 0) -> TensorView:
        return TensorView(tuple(stride), layout)

    def tensor_type(self, shape: Any, dtype: Any, memref: Any = None, tensor_view: Any = None) -> TensorType:
        return TensorType(tuple(shape), dtype, memref, tensor_view)

    def tile_type(self, shape: Any, dtype: Any, memref: Any = None, tile_view: Any = None) -> TileType:
        return TileType(tuple(shape), dtype, memref, tile_view)
