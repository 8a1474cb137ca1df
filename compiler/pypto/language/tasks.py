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

Two tasks conflict when they touch overlapping elements of the same buffer. A view (``x[a:b, :]``,
``pl.slice``) names a window of its base tensor, so each access is traced through the views to its
base and kept as a box of base elements (per axis ``[lo, hi)``, or the whole axis when an offset is
only known at run time): a race through a view of the same base is found, and two tasks writing
disjoint windows of one tensor do not race. A tile bound in one region and read by a later one (a
task output held in DDR, spec §4.1 (b)) is a buffer of its own, written by the first task.
"""

from __future__ import annotations

import ast
import enum
from dataclasses import dataclass, field, replace
from typing import Any

from pypto.enums import FunctionType, ParamDirection
from pypto.errors import ParseError
from pypto.ir import expr as E
from pypto.ir import stmt as St
from pypto.ir.types import TensorType, TileType, UnknownType, static_int
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
    touched: tuple[set, set] = field(default_factory=lambda: (set(), set()))  # (read, written) Accesses
    plain_call: bool = False  # a bare kernel call: it cannot be bound `as tid` nor take deps=


@dataclass(eq=False)
class TaskArray:
    """``pl.array.create(n, pl.TASK_ID)``: slots of task handles; as a dependency it means all of them.
    ``source`` is the array an element read (``tids[i]``) was taken from."""

    size: int
    slots: list = field(default_factory=list)
    source: TaskArray | None = None


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
    saved = st["tasks"], st.get("manual_loops", 0)
    if mode is ScopeMode.MANUAL:
        st["tasks"] = []
        st["manual_loops"] = len(st.get("loops", []))  # loops opened after this count repeat its tasks
    try:
        for s in node.body:
            p.guarded(s, p.stmt, s)
    finally:
        st["modes"].pop()
        st["tasks"], st["manual_loops"] = saved


class LoopTasks:
    """``with LoopTasks(p, trips):`` around an orchestration loop body: a task of a manual scope written
    in it runs once per trip, and two trips of it that write the same elements (a window known at
    compile time) race unless the task waits on its previous trip (spec pypto-jit §9: every pair of
    conflicting tasks with no path between them). ``trips`` is the static trip count, or None. The
    tasks of a loop that runs at most once are checked by the enclosing loop, if any."""

    def __init__(self, p: Any, trips: int | None) -> None:
        self.p, self.trips = p, trips

    def __enter__(self) -> None:
        state(self.p).setdefault("loops", []).append({"tasks": []})

    def __exit__(self, exc_type: type[BaseException] | None, *rest: object) -> None:
        loops = state(self.p)["loops"]
        mine = loops.pop()["tasks"]
        if exc_type is not None or not mine:
            return
        if self.trips is not None and self.trips < 2:
            if loops:
                loops[-1]["tasks"].extend(mine)
            return
        for task, node in mine:
            clash = _static_write(task)
            if clash and task not in task.ancestors and not any(isinstance(a, TaskArray) and task in a.slots
                                                                   for a in task.ancestors):
                raise ParseError(
                    f"race: task '{task.name}' runs once per trip of this loop and every trip writes the same "
                    f"elements of tensor '{clash}', inside pl.manual_scope() with no deps= path between the trips; "
                    "chain them (store each `as tid` into a pl.array of pl.TASK_ID and add deps=[tids[i - 1]]) or "
                    "write a window that moves with the loop", self.p.span(node))


def _static_write(task: TaskId) -> str | None:
    """A buffer ``task`` writes at a window fully known at compile time (the same elements each time)."""
    for w in sorted(task.touched[1], key=lambda a: a.label):
        if w.box is not None and all(b is not None for b in w.box):
            return w.label
    return None


def dependencies(p: Any, value: Any, node: ast.AST) -> set:
    """The tasks a ``deps=[...]`` list names (with their own ancestors): TaskIds, TaskArrays or None.
    A TaskArray named (whole or by an element) is in the set too: a task in a loop that stores its own
    handle into an array it waits on chains its iterations (``deps=[tids[i - 1]]``, then ``tids[i] =
    tid``)."""
    items = value if isinstance(value, (list, tuple)) else [value]
    out: set = set()
    for item in items:
        if item is None:
            continue
        if isinstance(item, TaskArray):
            out.add(item.source or item)
        handles = item.slots if isinstance(item, TaskArray) else [item]
        for h in handles:
            if not isinstance(h, TaskId):
                raise p.error("deps=[...] entries must be TaskIds (`as tid`), pl.array of pl.TASK_ID, or None",
                              node)
            out |= {h, *h.ancestors}
    return out


@dataclass(frozen=True)
class Access:
    """The elements of one buffer a task touches: ``key`` identifies the buffer (a base tensor's name,
    or the variable of a tile carried between regions), ``box`` is one ``(lo, hi)`` per axis of the
    base (None for a whole axis), or None for the whole buffer."""

    key: Any
    label: str
    box: tuple | None = None

    def overlaps(self, other: Access) -> bool:
        if self.key != other.key:
            return False
        if self.box is None or other.box is None:
            return True
        return all(a is None or b is None or (a[0] < b[1] and b[0] < a[1])
                   for a, b in zip(self.box, other.box, strict=False))


def _static_list(e: Any) -> list | None:
    """The ints of a ``MakeTuple`` (None where an entry is only known at run time)."""
    items = e.elements if isinstance(e, E.MakeTuple) else e if isinstance(e, (list, tuple)) else None
    if items is None:
        return None
    return [x if isinstance(x, int) else static_int(x) if isinstance(x, E.Expr) else None for x in items]


def note_tensor(p: Any, stmt: St.Stmt) -> None:
    """Remember what the race check needs of a new orchestration tensor: a view's base, an alias's
    target, and whether it was made with ``manual_dep=True``."""
    note_view(p, stmt)
    if isinstance(stmt, St.AssignStmt) and isinstance(stmt.value, E.Call) \
            and getattr(stmt.value.op, "name", "") == "tensor.create" and stmt.value.kwargs.get("manual_dep"):
        p.__dict__.setdefault("manual_dep_tensors", set()).add(stmt.var.name)


def note_view(p: Any, stmt: St.Stmt) -> None:
    """Remember a tensor defined as a view (or a reshape of one) of another, or as another name for
    one (``top = y[0:8, :]`` binds ``top`` to the view's temporary), for tracing accesses."""
    if not (isinstance(stmt, St.AssignStmt) and isinstance(stmt.var.type, TensorType)):
        return
    value = stmt.value
    if (isinstance(value, E.Call) and getattr(value.op, "name", "") in ("tensor.view", "tensor.reshape")) \
            or (isinstance(value, E.Var) and isinstance(value.type, TensorType)):
        p.__dict__.setdefault("tensor_views", {})[stmt.var] = value


def _window(offsets: Any, shape: Any) -> tuple | None:
    offs, dims = _static_list(offsets), _static_list(shape)
    if offs is None or dims is None or len(offs) != len(dims):
        return None
    return tuple(None if o is None or n is None else (o, o + n) for o, n in zip(offs, dims, strict=True))


def access(p: Any, var: E.Var, box: tuple | None = None) -> Access:
    """The access of ``box`` of ``var`` (None = all of it), traced through views to the base tensor."""
    views = p.__dict__.get("tensor_views", {})
    seen = 0
    while var in views and seen < 1000:
        call, seen = views[var], seen + 1
        if isinstance(call, E.Var):  # another name for the same tensor
            var = call
            continue
        src = call.args[0]
        if call.op.name == "tensor.reshape" or not isinstance(src, E.Var):
            box = None  # a reshape relabels elements: the whole of its source, conservatively
        else:
            window = _window(call.args[2], call.args[1])
            if box is None or window is None or len(box) != len(window):
                box = window
            else:  # a box of the view, moved by the view's offsets
                box = tuple(None if b is None or w is None else (w[0] + b[0], w[0] + b[1])
                            for b, w in zip(box, window, strict=True))
        if not isinstance(src, E.Var):
            break
        var = src
    if box is not None and all(b is None for b in box):
        box = None
    if var in p.__dict__.get("region_tensors", ()):  # a region's own result: that variable is its buffer
        return Access(var, var.name, box)
    return Access(var.name, var.name, box)


# Ops that write a tensor: the index of the tensor argument.
_WRITES_AT = {"block.store": 2, "block.write_gm": 1, "tensor.assemble": 0}


def _arg_box(call: E.Call, i: int) -> tuple | None:
    """The window of tensor argument ``i`` that ``call`` touches (None = all of it)."""
    name = call.op.name
    if name == "block.load" and i == 0 and len(call.args) > 2:
        return _window(call.args[1], call.args[2])
    if name == "block.store" and i == 2:
        return _window(call.args[1], getattr(call.args[0].type, "valid_shape", None))
    if name == "tensor.assemble" and i == 0 and len(call.args) > 2:
        return _window(call.args[2], getattr(call.args[1].type, "shape", None))
    return None


def touched(p: Any, body: St.Stmt) -> tuple[set, set]:
    """(read, written) accesses of a task body: stores, assembles and scalar writes write their
    target's window; loads read theirs; other uses touch the whole tensor. Tiles bound outside the
    body (carried from an earlier region) are read; tiles the body binds are written, and so are the
    tensors it computes (a tensor-level result is a buffer of its own, held in DDR when a later task
    reads it, spec §4.1 (b)); a view or another name of a tensor is traced to that tensor instead."""
    read, written = set(), set()
    defined = set()
    views = p.__dict__.get("tensor_views", {})
    own = p.__dict__.setdefault("region_tensors", set())
    for s in walk_stmts(body):
        if isinstance(s, St.AssignStmt):
            defined.add(s.var)
            if isinstance(s.var.type, TensorType) and s.var not in views:
                own.add(s.var)
                written.add(Access(s.var, s.var.name))
        call = getattr(s, "value", None) if isinstance(s, St.AssignStmt) else getattr(s, "expr", None)
        if not isinstance(call, E.Call):
            continue
        target = _WRITES_AT.get(getattr(call.op, "name", ""))
        for i, a in enumerate(call.args):
            if isinstance(a, E.Var) and isinstance(a.type, TensorType):
                (written if i == target else read).add(access(p, a, _arg_box(call, i)))
            elif isinstance(a, E.Var) and isinstance(a.type, TileType) and a not in defined:
                read.add(Access(a, a.name))
    written |= {Access(v, v.name) for v in defined if isinstance(v.type, TileType)}
    return read, written


def call_touches(p: Any, call: E.Call, directions: list | None) -> tuple[set, set]:
    """(read, written) accesses of a kernel call, by the callee's parameter directions (InOut when
    they are unknown)."""
    read, written = set(), set()
    for i, a in enumerate(call.args):
        if isinstance(a, E.Var) and isinstance(a.type, TensorType):
            d = directions[i] if directions is not None and i < len(directions) else ParamDirection.InOut
            if d is not ParamDirection.Out:
                read.add(access(p, a))
            if d is not ParamDirection.In:
                written.add(access(p, a))
    return read, written


def record_task(p: Any, node: ast.AST, task: TaskId) -> TaskId:
    """A finished task, checked against the earlier tasks it may run alongside: in a manual scope
    every earlier task of the scope; elsewhere the earlier tasks, through tensors made with
    ``manual_dep=True`` only (the runtime infers every other edge)."""
    st = state(p)
    task.touched[0].update(p.__dict__.pop("pending_reads", set()))  # a predicate's element, read when ready
    if st["modes"] and st["modes"][-1] is ScopeMode.MANUAL:
        _check_races(p, node, task, st["tasks"], None, "inside pl.manual_scope()")
        st["tasks"].append(task)
        loops = st.get("loops", [])
        if len(loops) > st.get("manual_loops", 0):  # in a loop inside the scope: it runs once per trip
            loops[-1]["tasks"].append((task, node))
        return task
    manual = p.__dict__.get("manual_dep_tensors", set())
    if manual:
        auto = st.setdefault("auto_tasks", [])
        _check_races(p, node, task, auto, manual, "which was created with manual_dep=True (no edge is inferred through it),")
        auto.append(task)
    return task


def _check_races(p: Any, node: ast.AST, task: TaskId, earlier_tasks: list, only: set | None, where: str) -> None:
    for earlier in earlier_tasks:
        clash = _conflict(earlier, task, only)
        if clash and earlier not in task.ancestors:
            how = "bind the earlier task with `as tid` and add deps=[tid]"
            if task.plain_call or earlier.plain_call:
                how += (" (a kernel call takes both when launched as `with pl.spmd(1, deps=[...]) as tid:`, or "
                        "`pl.submit` in a @pl.program)")
            raise ParseError(
                f"race: task '{task.name}' and task '{earlier.name}' (line {earlier.line}) both use tensor "
                f"'{clash}' and one of them writes it, {where} with no deps= path between them; {how}",
                p.span(node))


def _conflict(a: TaskId, b: TaskId, only: set | None = None) -> str | None:
    """The buffer two tasks both touch where one of them writes (overlapping elements; among the
    buffers named in ``only`` when given), else None."""
    (ar, aw), (br, bw) = a.touched, b.touched
    pairs = [(x, y) for x in aw for y in (*br, *bw)] + [(x, y) for x in bw for y in ar]
    clashes = sorted(x.label for x, y in pairs if x.overlaps(y) and (only is None or x.key in only))
    return clashes[0] if clashes else None


def kernel_call_task(p: Any, node: ast.Call, call: E.Call, directions: list) -> None:
    """A plain call of an InCore kernel from orchestration is a task too (spec §9 (2)): inside a manual
    scope it has no declared edges, so a conflict with an earlier task of the scope is a race that
    program order would hide. A call that ``pl.submit`` or an SPMD launch makes records its own task."""
    if p.in_incore or "spmd_deps" in p.__dict__ or p.__dict__.get("submitting"):
        return
    name = ast.unparse(node.func).removeprefix("self.")
    record_task(p, node, TaskId(name, p.span(node).line, set(), call_touches(p, call, directions), True))


def at_task(p: Any, node: ast.With, name: str, deps: set, body: St.Stmt) -> TaskId:
    """The task of a ``with pl.at(...)`` region that has just been parsed."""
    return record_task(p, node, TaskId(name or f"task@{p.span(node).line}", p.span(node).line, set(deps),
                                       touched(p, body)))


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


def task_array_item(p: Any, base: TaskArray, idx: Any, node: ast.Subscript) -> TaskArray:
    """``tids[i]`` read as a dependency (``deps=[tids[i - 1]]``, a chain of tasks in a loop): the
    handles stored into ``tids`` so far. TaskIds are compile-time values and a task written in a loop
    is one handle for all its iterations, so the slot a run-time index picks is not known; waiting for
    every task stored so far is a superset of the edge declared, which program order satisfies. A
    constant index is checked against the array's size."""
    k = idx if isinstance(idx, int) and not isinstance(idx, bool) else static_int(idx) if isinstance(idx, E.Expr) else None
    if k is not None and not 0 <= k < base.size:
        raise p.error(f"index {k} is outside the pl.array of {base.size} TaskIds", node.slice)
    if not base.slots:
        raise p.error("this pl.array of pl.TASK_ID is read before any TaskId was stored into it", node)
    return TaskArray(base.size, list(base.slots), base.source or base)


_SUBMIT_KEYWORDS = ("deps", "dumps", "allow_early_resolve", "predicate")
_SPMD_SUBMIT_KEYWORDS = (*_SUBMIT_KEYWORDS, "core_num", "sync_start")


def submit(p: Any, node: ast.Call, dispatch_call: Any, predicate: Any, spmd: bool = False) -> tuple:
    """``r, tid = pl.submit(self.k, *args, deps=[...], predicate=...)`` (``@pl.program`` only): the call
    and its TaskId. ``predicate`` parses a ``predicate=(t[i] > 0)`` keyword as ``pl.spmd`` does (spec
    §4.3, §9): the call then sits in an ``if``, and a skipped task's result is the Out/InOut argument it
    would have written, unchanged. ``spmd``: ``pl.spmd_submit(self.k, *args, core_num=N, ...)``, the
    same task launched as N blocks (spec §4.3; ``sync_start`` is what the chip does anyway)."""
    what = "pl.spmd_submit" if spmd else "pl.submit"
    if not node.args or not (isinstance(node.args[0], ast.Attribute) and isinstance(node.args[0].value, ast.Name)
                             and node.args[0].value.id == "self"):
        raise p.error(f"{what}(self.<kernel>, *args, deps=[...]): the callee is written self.<method>", node)
    kw = {k.arg: k.value for k in node.keywords}
    unknown = sorted(set(kw) - set(_SPMD_SUBMIT_KEYWORDS if spmd else _SUBMIT_KEYWORDS))
    if unknown:
        raise p.error(f"{what}() got an unexpected keyword argument '{unknown[0]}'", node)
    blocks = _core_num(p, node, kw) if spmd else None
    deps = dependencies(p, p.expr(kw["deps"]), kw["deps"]) if "deps" in kw else set()
    cond = predicate(p, node, what)
    call_node = ast.copy_location(ast.Call(func=node.args[0], args=node.args[1:], keywords=[]), node)
    p.__dict__["submitting"] = True
    try:
        call = dispatch_call(p, call_node)
    finally:
        p.__dict__.pop("submitting", None)
    if blocks is not None:
        kind = p.program.kinds.get(node.args[0].attr)
        if kind is not FunctionType.InCore:
            raise p.error(f"pl.spmd_submit launches InCore kernels; '{node.args[0].attr}' is a "
                          f"{getattr(kind, 'name', 'plain')} function", node.args[0])
        call = replace(call, kwargs={**call.kwargs, "blocks": blocks})
    sig = p.program.signatures.get(node.args[0].attr, (None, None))[1] if p.program is not None else None
    directions = list(sig.directions) if sig is not None else None
    read, written = call_touches(p, call, directions)  # (+ the predicate's element: record_task)
    task = record_task(p, node, TaskId(node.args[0].attr, p.span(node).line, deps, (read, written)))
    if cond is None:
        return p.temp(call, node), task
    return _predicated(p, node, cond, call, directions), task


def _core_num(p: Any, node: ast.Call, kw: dict) -> int:
    """The ``core_num=`` of a ``pl.spmd_submit``: a positive count known when the program is parsed."""
    if "core_num" not in kw:
        raise p.error("pl.spmd_submit(self.<kernel>, *args, core_num=N, ...): core_num is required", node)
    n = p.expr(kw["core_num"])
    if isinstance(n, bool) or not isinstance(n, int) or n <= 0:
        raise p.error(f"pl.spmd_submit(core_num=...) must be a positive count known when the program is parsed, "
                      f"got {n!r}", kw["core_num"])
    return n


def _predicated(p: Any, node: ast.Call, cond: E.Expr, call: E.Call, directions: list | None) -> Any:
    """``if cond: r = call else: r = <the argument call would have written>``; ``r`` (None when the
    kernel returns nothing)."""
    span = p.span(node)
    rtype = call.type
    if not isinstance(rtype, TensorType):
        if rtype is not None and not isinstance(rtype, UnknownType):
            raise p.error("a predicated pl.submit binds a result only when the kernel returns one tensor (a skipped "
                          "task returns the Out/InOut argument unchanged)", node)
        p.emit(St.IfStmt(cond, St.SeqStmts((St.EvalStmt(call, span),), span), None, (), span))
        return None
    written = [a for i, a in enumerate(call.args) if isinstance(a, E.Var) and a.type == rtype
               and (directions is None or i >= len(directions) or directions[i] is not ParamDirection.In)]
    if len(written) != 1:
        raise p.error(f"a predicated pl.submit returns, when skipped, the Out/InOut argument the kernel returns; "
                      f"{len(written)} arguments of its type could be that one: call it as a statement instead",
                      node)
    p.tmp_counter += 1
    name = f"_t{p.tmp_counter - 1}"
    ran, skipped = E.Var(name, rtype, span), E.Var(name, rtype, span)
    p.emit(St.IfStmt(cond, St.SeqStmts((St.AssignStmt(ran, call, span),), span),
                     St.SeqStmts((St.AssignStmt(skipped, written[0], span),), span), (), span))
    return skipped


def task_dummy(p: Any, node: ast.Call, args: list, kwargs: dict) -> TaskId:
    """``pl.system.task_dummy(deps=[...])``: a join, ready once all its deps are."""
    if args or set(kwargs) - {"deps"}:
        raise p.error("pl.system.task_dummy takes only deps=[...]", node)
    return TaskId("task_dummy", p.span(node).line, dependencies(p, kwargs.get("deps", []), node))


def no_dep(p: Any, node: ast.Call, args: list, kwargs: dict) -> Any:
    if len(args) != 1 or kwargs:
        raise p.error("pl.no_dep(t) takes one tensor", node)
    return args[0]
