"""Statement nodes and functions/programs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pypto.enums import ForKind, FunctionType, ParamDirection, ScopeKind
from pypto.errors import UNKNOWN_SPAN, Span
from pypto.ir.expr import Expr, GlobalVar, Var


class Stmt:
    __slots__ = ()


@dataclass(frozen=True, slots=True, eq=False)
class AssignStmt(Stmt):
    var: Var
    value: Expr
    span: Span = UNKNOWN_SPAN


@dataclass(frozen=True, slots=True, eq=False)
class EvalStmt(Stmt):
    expr: Expr
    span: Span = UNKNOWN_SPAN


@dataclass(frozen=True, slots=True, eq=False)
class SeqStmts(Stmt):
    stmts: tuple
    span: Span = UNKNOWN_SPAN


@dataclass(frozen=True, slots=True, eq=False)
class OpStmts(Stmt):
    stmts: tuple
    span: Span = UNKNOWN_SPAN


@dataclass(frozen=True, slots=True, eq=False)
class YieldStmt(Stmt):
    value: tuple
    span: Span = UNKNOWN_SPAN


@dataclass(frozen=True, slots=True, eq=False)
class ReturnStmt(Stmt):
    value: tuple = ()
    span: Span = UNKNOWN_SPAN


@dataclass(frozen=True, slots=True, eq=False)
class IfStmt(Stmt):
    condition: Expr
    then_body: Stmt
    else_body: Stmt | None
    return_vars: tuple = ()
    span: Span = UNKNOWN_SPAN


@dataclass(frozen=True, slots=True, eq=False)
class ForStmt(Stmt):
    loop_var: Var
    start: Expr
    stop: Expr
    step: Expr
    iter_args: tuple
    body: Stmt
    return_vars: tuple
    span: Span = UNKNOWN_SPAN
    kind: ForKind = ForKind.Sequential
    chunk_size: Expr | None = None
    chunk_policy: int = 0
    loop_origin: int = 0
    # (min_chunk, max_chunk) of a pl.parallel_for_power2 loop (ExpandPower2 expands it), else None
    power2: tuple | None = None


@dataclass(frozen=True, slots=True, eq=False)
class WhileStmt(Stmt):
    condition: Expr
    iter_args: tuple
    body: Stmt
    return_vars: tuple
    span: Span = UNKNOWN_SPAN


@dataclass(frozen=True, slots=True, eq=False)
class ScopeStmt(Stmt):
    """A region of a function. An InCore scope becomes a kernel (OutlineIncoreScopes): named
    ``name_hint`` when given (``pl.at(..., name_hint=...)``), and launched as ``blocks`` SPMD blocks
    when given (``pl.spmd(n)``; None = one ordinary task)."""

    scope_kind: ScopeKind
    body: Stmt
    span: Span = UNKNOWN_SPAN
    name_hint: str = ""
    blocks: int | None = None
    # ``optimizations=[pl.split(mode), pl.cross_core_slot(slot_num=n)]`` of the pl.at (spec pypto-jit
    # §4.1): the AIVs' split of a mixed region ("UP_DOWN", "LEFT_RIGHT", "NONE"; "" = not given) and the
    # cross-core ring depth (None = not given); carried to the kernel, read by SplitCubeVector
    split_mode: str = ""
    slot_num: int | None = None


@dataclass(frozen=True, slots=True, eq=False)
class BreakStmt(Stmt):
    span: Span = UNKNOWN_SPAN


@dataclass(frozen=True, slots=True, eq=False)
class ContinueStmt(Stmt):
    span: Span = UNKNOWN_SPAN


@dataclass(frozen=True, slots=True, eq=False)
class Function:
    name: str
    params: tuple
    return_types: tuple
    body: Stmt
    span: Span = UNKNOWN_SPAN
    type: FunctionType = FunctionType.Opaque
    param_directions: tuple = ()
    split_mode: str = ""  # from the outlined pl.at's optimizations= (ScopeStmt.split_mode)
    slot_num: int | None = None  # likewise (ScopeStmt.slot_num)

    def __post_init__(self) -> None:
        params, dirs = [], []
        for i, p in enumerate(self.params):
            if isinstance(p, tuple):
                params.append(p[0])
                dirs.append(p[1])
            else:
                params.append(p)
                dirs.append(self.param_directions[i] if i < len(self.param_directions) else ParamDirection.In)
        object.__setattr__(self, "params", tuple(params))
        object.__setattr__(self, "param_directions", tuple(dirs))
        object.__setattr__(self, "return_types", tuple(self.return_types))

    @property
    def func_type(self) -> FunctionType:
        return self.type


@dataclass(frozen=True, slots=True, eq=False)
class Program:
    functions_list: tuple
    name: str = "program"
    span: Span = UNKNOWN_SPAN
    global_vars: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        gvs = dict(self.global_vars)
        for f in self.functions_list:
            gvs.setdefault(f.name, GlobalVar(f.name))
        object.__setattr__(self, "global_vars", gvs)

    @property
    def functions(self) -> dict[GlobalVar, Function]:
        return {self.global_vars[f.name]: f for f in sorted(self.functions_list, key=lambda f: f.name)}

    def get_function(self, name: str) -> Function | None:
        for f in self.functions_list:
            if f.name == name:
                return f
        return None

    def get_global_var(self, name: str) -> GlobalVar | None:
        return self.global_vars.get(name)

    def with_functions(self, funcs: Any) -> Program:
        return Program(tuple(funcs), self.name, self.span, self.global_vars)
