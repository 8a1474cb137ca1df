"""Task-graph constructs of jit programs (spec pypto-jit §9): ``with pl.manual_scope()``, ``pl.scope``,
``with pl.at(..., deps=[...]) as tid``, ``pl.submit``, ``pl.system.task_dummy``, ``pl.array`` of
``pl.TASK_ID``, ``pl.no_dep``.

On the emulator a task graph runs in program order: every declared edge points from an earlier
dispatch to a later one (a TaskId only exists once its task has been written), so program order is a
topological order of the graph and, for a race-free program, gives its results (spec §1.3). What
program order would hide is a missing edge: inside a manual scope two tasks that touch the same tensor
(one writing it) with no path of declared edges between them race on hardware. The parser checks
that for every pair of ``pl.at`` tasks of a manual scope and reports it at the later task's line.
TaskIds are compile-time values: they exist only while the program is parsed.
"""

from __future__ import annotations

import ast
import enum
from dataclasses import dataclass, field
from typing import Any

from pypto.errors import ParseError
from pypto.ir import expr as E
from pypto.ir import stmt as St
from pypto.ir.types import TensorType
from pypto.ir.visitor import walk_stmts


class ScopeMode(enum.Enum):
    AUTO = "AUTO"
    MANUAL = "MANUAL"


class _TaskIdDtype:
    """``pl.TASK_ID``: the element type of task handles (``pl.array.create(n, pl.TASK_ID)``)."""

    def __repr__(self) -> str:
        return "pl.TASK_ID"


TASK_ID = _TaskIdDtype()


@dataclass(eq=False)
class TaskId:
    """A dispatched task: its name, where it was written, and every task it waits for (transitively)."""

    name: str
    line: int
    ancestors: set = field(default_factory=set)
    touched: tuple[set, set] = field(default_factory=lambda: (set(), set()))  # (read, written) tensor names


@dataclass(eq=False)
class TaskArray:
    """``pl.array.create(n, pl.TASK_ID)``: slots of task handles; as a dependency it means all of them."""

    size: int
    slots: list = field(default_factory=list)


class _ArrayNamespace:
    """``pl.array``: small on-core arrays; only arrays of ``pl.TASK_ID`` are task-graph values."""

    def create(self, n: int, dtype: Any) -> TaskArray:  # called by the parser on static arguments
        if dtype is not TASK_ID:
            raise TypeError("pl.array.create: only arrays of pl.TASK_ID are supported")
        return TaskArray(int(n))


array = _ArrayNamespace()


class _Scope:
    def __init__(self, mode: ScopeMode = ScopeMode.AUTO) -> None:
        self.mode = mode

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def scope(mode: ScopeMode = ScopeMode.AUTO) -> _Scope:
    """Plain-Python stand-in; inside a jit body the parser reads ``pl.scope`` itself."""
    return _Scope(mode)


def manual_scope() -> _Scope:
    return _Scope(ScopeMode.MANUAL)


# ----------------------------------------------------------------------------- parser side


def state(p: Any) -> dict:
    """The parser's task-graph state: the stack of open scope modes and the tasks of manual scopes."""
    return p.__dict__.setdefault("task_graph", {"modes": [], "tasks": []})


def scope_mode(p: Any, ctx: ast.Call) -> ScopeMode:
    """The mode a ``pl.manual_scope()`` / ``pl.scope(mode=...)`` opens, checked for where it is written."""
    name = ctx.func.attr
    if name == "manual_scope":
        if ctx.args or ctx.keywords:
            raise p.error("pl.manual_scope() takes no arguments", ctx)
        mode = ScopeMode.MANUAL
    else:
        kw = {k.arg: k.value for k in ctx.keywords}
        if ctx.args or set(kw) - {"mode"}:
            raise p.error("pl.scope takes only mode=pl.ScopeMode.AUTO or MANUAL", ctx)
        mode = p.expr(kw["mode"]) if "mode" in kw else ScopeMode.AUTO
        if not isinstance(mode, ScopeMode):
            raise p.error("pl.scope(mode=...) must be pl.ScopeMode.AUTO or pl.ScopeMode.MANUAL", ctx)
    if p.in_incore:
        raise p.error(f"pl.{name}() is an orchestration scope; it cannot be written inside an InCore region", ctx)
    modes = state(p)["modes"]
    if ScopeMode.MANUAL in modes:
        what = "a manual scope" if mode is ScopeMode.MANUAL else "an AUTO scope"
        raise p.error(f"{what} cannot be nested inside a manual scope", ctx)
    return mode


def open_scope(p: Any, node: ast.With, mode: ScopeMode) -> None:
    """Parse a scope's body in place: scopes order tasks, they are not regions of their own."""
    st = state(p)
    st["modes"].append(mode)
    saved = st["tasks"]
    if mode is ScopeMode.MANUAL:
        st["tasks"] = []
    try:
        for s in node.body:
            p.guarded(s, p.stmt, s)
    finally:
        st["modes"].pop()
        st["tasks"] = saved


def dependencies(p: Any, value: Any, node: ast.AST) -> set:
    """The tasks a ``deps=[...]`` list names (with their own ancestors): TaskIds, TaskArrays or None."""
    items = value if isinstance(value, (list, tuple)) else [value]
    out: set = set()
    for item in items:
        if item is None:
            continue
        handles = item.slots if isinstance(item, TaskArray) else [item]
        for h in handles:
            if not isinstance(h, TaskId):
                raise p.error("deps=[...] entries must be TaskIds (`as tid`), pl.array of pl.TASK_ID, or None",
                              node)
            out |= {h, *h.ancestors}
    return out


def _root_name(v: Any) -> str | None:
    return v.name if isinstance(v, E.Var) and isinstance(v.type, TensorType) else None


def touched(body: St.Stmt) -> tuple[set, set]:
    """(read, written) outer tensor names of a task body: stores and scalar writes write their target."""
    writes_at = {"block.store": 2, "block.write_gm": 1}
    read, written = set(), set()
    for s in walk_stmts(body):
        call = getattr(s, "value", None) if isinstance(s, St.AssignStmt) else getattr(s, "expr", None)
        if not isinstance(call, E.Call):
            continue
        target = writes_at.get(getattr(call.op, "name", ""))
        for i, a in enumerate(call.args):
            name = _root_name(a)
            if name is not None:
                (written if i == target else read).add(name)
    return read, written


def record_task(p: Any, node: ast.AST, task: TaskId) -> TaskId:
    """A finished task; in a manual scope, checked against the scope's earlier tasks."""
    st = state(p)
    if st["modes"] and st["modes"][-1] is ScopeMode.MANUAL:
        for earlier in st["tasks"]:
            clash = _conflict(earlier, task)
            if clash and earlier not in task.ancestors:
                raise ParseError(
                    f"race: task '{task.name}' and task '{earlier.name}' (line {earlier.line}) both use tensor "
                    f"'{clash}' and one of them writes it, inside pl.manual_scope() with no deps= path between "
                    "them; bind the earlier task with `as tid` and add deps=[tid]", p.span(node))
        st["tasks"].append(task)
    return task


def _conflict(a: TaskId, b: TaskId) -> str | None:
    (ar, aw), (br, bw) = a.touched, b.touched
    both = (aw & (br | bw)) | (bw & ar)
    return min(both) if both else None


def at_task(p: Any, node: ast.With, name: str, deps: set, body: St.Stmt) -> TaskId:
    """The task of a ``with pl.at(...)`` region that has just been parsed."""
    return record_task(p, node, TaskId(name or f"task@{p.span(node).line}", p.span(node).line, set(deps), touched(body)))


def bind_task_array_slot(p: Any, target: ast.Subscript, value_node: ast.AST, node: ast.AST) -> bool:
    """``tids[i] = tid``: store a handle into a TaskArray (True when ``target`` is one)."""
    if not isinstance(target.value, ast.Name) or target.value.id not in p.env:
        return False
    base = p.env[target.value.id]
    if not isinstance(base, TaskArray):
        return False
    value = p.expr(value_node)
    if not isinstance(value, TaskId):
        raise p.error("only TaskIds can be stored into a pl.array of pl.TASK_ID", node)
    base.slots.append(value)
    return True


_SUBMIT_KEYWORDS = ("deps", "dumps", "allow_early_resolve")


def submit(p: Any, node: ast.Call, dispatch_call: Any) -> tuple:
    """``r, tid = pl.submit(self.k, *args, deps=[...])`` (``@pl.program`` only): the call and its TaskId."""
    if not node.args or not (isinstance(node.args[0], ast.Attribute) and isinstance(node.args[0].value, ast.Name)
                             and node.args[0].value.id == "self"):
        raise p.error("pl.submit(self.<kernel>, *args, deps=[...]): the callee is written self.<method>", node)
    kw = {k.arg: k.value for k in node.keywords}
    if "predicate" in kw:
        raise p.error("pl.submit(predicate=...) (a conditionally skipped task) is not supported by the emulator yet",
                      kw["predicate"])
    unknown = sorted(set(kw) - set(_SUBMIT_KEYWORDS))
    if unknown:
        raise p.error(f"pl.submit() got an unexpected keyword argument '{unknown[0]}'", node)
    deps = dependencies(p, p.expr(kw["deps"]), kw["deps"]) if "deps" in kw else set()
    call_node = ast.copy_location(ast.Call(func=node.args[0], args=node.args[1:], keywords=[]), node)
    call = dispatch_call(p, call_node)
    read, written = set(), set()
    sig = p.program.signatures.get(node.args[0].attr, (None, None))[1] if p.program is not None else None
    for i, a in enumerate(call.args):
        name = _root_name(a)
        direction = sig.directions[i].name if sig is not None and i < len(sig.directions) else "In"
        if name is not None:
            if direction != "Out":
                read.add(name)
            if direction != "In":
                written.add(name)
    task = record_task(p, node, TaskId(node.args[0].attr, p.span(node).line, deps, (read, written)))
    return p.temp(call, node), task


def task_dummy(p: Any, node: ast.Call, args: list, kwargs: dict) -> TaskId:
    """``pl.system.task_dummy(deps=[...])``: a join, ready once all its deps are."""
    if args or set(kwargs) - {"deps"}:
        raise p.error("pl.system.task_dummy takes only deps=[...]", node)
    return TaskId("task_dummy", p.span(node).line, dependencies(p, kwargs.get("deps", []), node))


def no_dep(p: Any, node: ast.Call, args: list, kwargs: dict) -> Any:
    if len(args) != 1 or kwargs:
        raise p.error("pl.no_dep(t) takes one tensor", node)
    return args[0]
