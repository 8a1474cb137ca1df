"""The statement forms of ``pl.spmd`` (spec pypto-jit §4.3), parsed on behalf of the DSL parser.

* ``for i in pl.spmd(n):`` - the body is a kernel launched as ``n`` blocks, ``i`` its block index (a
  body that is one ``with pl.at(...)`` region is that region);
* ``with pl.spmd(n[, deps=[...]]) [as tid]:`` around one kernel call or one ``pl.at`` region (the
  dispatch form), or around InCore code that reads ``pl.get_block_idx()`` itself (the inline form).

The launch is an InCore scope (or a kernel call) carrying its block count (``ScopeStmt.blocks``,
``Call.kwargs["blocks"]``), which the runtime passes to the chip, and one task of the task graph
(:mod:`pypto.language.tasks`). ``p`` is the :class:`pypto.language.parser.FunctionParser`.
"""

from __future__ import annotations

import ast
from dataclasses import replace
from typing import Any

from pypto.dtype import DataType
from pypto.enums import FunctionType, ScopeKind
from pypto.errors import PyptoTypeError
from pypto.ir import expr as E
from pypto.ir import stmt as St
from pypto.ir.types import ScalarType, TensorType
from pypto.ir.visitor import substitute, walk
from pypto.language import lanes, tasks
from pypto.language.optimizations import SplitMode
from pypto.language.placement import at_name_hint, check_at, check_spmd
from pypto.ops import block as B
from pypto.ops import tensor as T
from pypto.passes.ir_utils import definitions


def _stmt_call(s: Any) -> Any:
    """The call an assignment or expression statement makes (None for other statements)."""
    if isinstance(s, St.AssignStmt):
        return s.value
    if isinstance(s, St.EvalStmt):
        return s.expr
    return None


def _single_at(p: Any, stmts: list) -> ast.Call | None:
    """The ``pl.at(...)`` call when ``stmts`` is exactly one ``with pl.at(...)`` statement."""
    if len(stmts) == 1 and isinstance(stmts[0], ast.With) and len(stmts[0].items) == 1:
        ctx = stmts[0].items[0].context_expr
        if p._is_helper_call(ctx, "at"):
            return ctx
    return None


_PREDICATE_OPS = {ast.Gt: "Gt", ast.GtE: "Ge", ast.Lt: "Lt", ast.LtE: "Le", ast.Eq: "Eq", ast.NotEq: "Ne"}


def predicate(p: Any, call: ast.Call, what: str = "pl.spmd") -> E.Expr | None:
    """``predicate=(t[i] > 0)`` of a ``pl.spmd`` (spec §4.3): one element of one tensor compared with
    an integer literal. It becomes a host read of the element and an ``if`` around the launch, so a
    false predicate skips the task (the read waits for the element's producer, as the runtime's
    readiness check does)."""
    node = next((k.value for k in call.keywords if k.arg == "predicate"), None)
    if node is None:
        return None
    ok = (isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _PREDICATE_OPS
          and isinstance(node.left, ast.Subscript) and isinstance(node.comparators[0], ast.Constant)
          and type(node.comparators[0].value) is int)
    tensor = p.expr(node.left.value) if ok else None
    if not (isinstance(tensor, E.Expr) and isinstance(tensor.type, TensorType)):
        raise p.error(f"{what}(predicate=...) takes one comparison of one tensor element with an integer literal, "
                      "e.g. predicate=(flags[i] > 0)", node)
    index = node.left.slice
    items = list(index.elts) if isinstance(index, ast.Tuple) else [index]
    if len(items) != len(tensor.type.shape) or any(isinstance(i, ast.Slice) for i in items):
        raise p.error(f"{what}(predicate=...): index one element of the rank-{len(tensor.type.shape)} tensor", index)
    span = p.span(node)
    # the task reads the element when it becomes ready: its producer must be ordered before it (§4.3)
    p.__dict__["pending_reads"] = {tasks.access(p, tensor)} if isinstance(tensor, E.Var) else set()
    value = p.temp(T.read(tensor, [p.to_ir(p.expr(i), i) for i in items], span=span), node)
    dtype = tensor.type.dtype
    literal = node.comparators[0].value
    bound = E.ConstFloat(float(literal), dtype, span) if dtype.is_float() else E.ConstInt(literal, dtype, span)
    return E.BINARY_BUILDERS[_PREDICATE_OPS[type(node.ops[0])]](value, bound, span)


def _guarded(p: Any, cond: E.Expr | None, node: ast.AST, emit: Any) -> Any:
    """Run ``emit`` (which emits a launch); with a predicate, the launch sits in ``if cond:``."""
    if cond is None:
        return emit()
    p.blocks.append([])
    try:
        out = emit()
    finally:
        stmts = p.blocks.pop()
    defined = [s.var.name for s in stmts if isinstance(s, St.AssignStmt)]
    if defined:
        raise p.error(f"a predicated pl.spmd launch cannot bind a result ('{defined[0]}'): a skipped task has none; "
                      "call the kernel as a statement (its Out arguments are written in place)", node)
    # The kernel's own names are its own: renamed so that no later statement of the same name sees
    # them merged out of the `if` (SSA would make them results of the if, hence of the kernel).
    body = St.SeqStmts(tuple(stmts), p.span(node))
    local = {v: E.Var(f"{v.name}_in_{node.lineno}", v.type, v.span) for v in definitions(body)
             if type(v) is E.Var}
    p.emit(St.IfStmt(cond, substitute(body, local), None, (), p.span(node)))
    return out


def spmd_loop(p: Any, node: ast.For) -> None:
    """``for i in pl.spmd(n):``: the body is a kernel launched as n blocks, ``i`` its block index.
    A body that is one ``with pl.at(...)`` region is that region (its name_hint names the kernel)."""
    n, hint = check_spmd(p, node.iter)
    if node.orelse:
        raise p.error("for ... else is not supported", node)
    name = p._target_name(node.target)
    idx = E.Var(name, ScalarType(DataType.INDEX), p.span(node.target))
    stmts = node.body
    at = _single_at(p, stmts)
    deps: set = set()
    target = None
    if at is not None:  # the region is the kernel: its name, its deps= and its `as tid` are the launch's
        check_at(p, at)
        hint = at_name_hint(p, at) or hint
        kw = {k.arg: k.value for k in at.keywords}
        deps = tasks.dependencies(p, p.expr(kw["deps"]), kw["deps"]) if "deps" in kw else set()
        target = stmts[0].items[0].optional_vars
        stmts = stmts[0].body
    cond = predicate(p, node.iter)
    saved = p.env.get(name)
    p.env[name] = idx
    try:
        prologue = (St.AssignStmt(idx, B.get_block_idx(span=p.span(node.target)), p.span(node.target)),)
        body = p.incore_block(stmts, prologue)
    finally:
        if saved is None:
            p.env.pop(name, None)
        else:
            p.env[name] = saved
    _guarded(p, cond, node, lambda: p.emit(St.ScopeStmt(ScopeKind.InCore, body, p.span(node), hint, n)))
    task = tasks.at_task(p, node, hint, deps, body)
    if target is not None:
        p.env[p._target_name(target)] = task


def split_aiv_loop(p: Any, node: ast.For) -> None:
    """``for lane in pl.split_aiv(2, mode=pl.SplitMode.NONE):`` in InCore code (spec §4.5): both AIVs of
    the core group run the body, ``lane`` being theirs (0 or 1); the kernel is launched on the two
    AIVs of a group (code generation), so results sharded by ``lane`` combine in the output. In NONE
    mode a side effect the body does not guard or shard by ``lane`` happens twice, as on the chip.
    In UP_DOWN / LEFT_RIGHT mode each lane processes its half of every vector tile of the body (by
    rows / by columns): the body is parsed for whole tiles and rewritten for one lane
    (:mod:`pypto.language.lanes`)."""
    call = node.iter
    if not p.in_incore:
        raise p.error("pl.split_aiv opens lane regions inside InCore code (a pl.at region or an InCore function)",
                      call)
    kw = {k.arg: k.value for k in call.keywords}
    unknown = sorted(set(kw) - {"mode"})
    if unknown or len(call.args) > 2:
        raise p.error(f"pl.split_aiv takes (2, mode=pl.SplitMode.X), got {unknown or len(call.args)}", call)
    n = p.expr(call.args[0]) if call.args else 2
    if n != 2:
        raise p.error(f"pl.split_aiv(n): a core group has 2 AIVs, so n must be 2, got {n!r}", call)
    mode_node = kw.get("mode", call.args[1] if len(call.args) > 1 else None)
    mode = p.expr(mode_node) if mode_node is not None else SplitMode.NONE
    if not isinstance(mode, SplitMode):
        raise p.error(f"pl.split_aiv(mode=...) takes a pl.SplitMode, got {mode!r}", call, PyptoTypeError)
    if lanes.current(p) is not None:
        raise p.error("pl.split_aiv lane regions do not nest", call)
    if node.orelse:
        raise p.error("for ... else is not supported", node)
    name = p._target_name(node.target)
    lane = E.Var(name, ScalarType(DataType.INDEX), p.span(node.target))
    p.emit(St.AssignStmt(lane, B.get_aiv_lane(span=p.span(node.target)), p.span(node.target)))
    saved = p.env.get(name)
    p.env[name] = lane
    split = p.__dict__["lane_split"] = lanes.LaneSplit(mode, lane)
    p.blocks.append([])
    try:
        for s in node.body:
            p.guarded(s, p.stmt, s)
    finally:
        stmts = p.blocks.pop()
        p.__dict__.pop("lane_split", None)
        if saved is None:
            p.env.pop(name, None)
        else:
            p.env[name] = saved
    if mode is not SplitMode.NONE:  # the body was parsed for whole tiles: rewrite it for one lane
        stmts, mapping = lanes.halve(p, split, stmts)
        modes = p.__dict__.setdefault("lane_modes", {})
        for key, value in list(p.env.items()):
            if value in mapping:
                p.env[key] = mapping[value]
                modes[mapping[value]] = mode
    for s in stmts:
        p.emit(s)


def spmd_with(p: Any, node: ast.With, call: ast.Call) -> None:
    """``with pl.spmd(n[, deps=[...]]) [as tid]:`` around one kernel call (dispatch form), one
    ``pl.at`` region, or InCore code that reads ``pl.get_block_idx()`` itself (inline form). The
    launch is one task of the task graph: ``deps=`` are its declared edges, ``tid`` names it."""
    n, hint = check_spmd(p, call, with_form=True)
    kw = {k.arg: k.value for k in call.keywords}
    deps = tasks.dependencies(p, p.expr(kw["deps"]), kw["deps"]) if "deps" in kw else set()
    target = node.items[0].optional_vars
    cond = predicate(p, call)
    if not _dispatches(p, node.body):
        body = p.incore_block(node.body)
        if not any(isinstance(x, E.Call) and x.op.name == "block.get_block_idx" for x in walk(body)):
            raise p.error("the body of pl.spmd neither calls a kernel nor reads pl.get_block_idx(), so "
                             "every block would do identical work", node)
        _guarded(p, cond, node, lambda: p.emit(St.ScopeStmt(ScopeKind.InCore, body, p.span(node), hint, n)))
        task = tasks.at_task(p, node, hint, deps, body)
    else:
        task = _guarded(p, cond, node, lambda: _spmd_dispatch(p, node, n, hint, deps))
    if target is not None:
        p.env[p._target_name(target)] = task


def _spmd_dispatch(p: Any, node: ast.With, n: int, hint: str, deps: set) -> Any:
    """The dispatch form: the one kernel call or pl.at region of the body launched as n blocks."""
    p.__dict__["spmd_deps"] = deps  # the pl.at region inside is this launch's task
    try:
        body = p.block(node.body)
    finally:
        inner_task = p.__dict__.pop("last_at_task", None)
        p.__dict__.pop("spmd_deps", None)
    scopes = [i for i, x in enumerate(body.stmts) if isinstance(x, St.ScopeStmt)]
    calls = [i for i, x in enumerate(body.stmts) if isinstance(_stmt_call(x), E.Call)
             and isinstance(_stmt_call(x).op, E.GlobalVar)]
    if len(scopes) + len(calls) != 1:
        raise p.error(f"the body of pl.spmd dispatches {len(scopes) + len(calls)} kernels; it must dispatch "
                         "exactly one (one kernel call or one pl.at region)", node)
    stmts = list(body.stmts)
    if scopes:
        sc = stmts[scopes[0]]
        stmts[scopes[0]] = replace(sc, name_hint=sc.name_hint or hint, blocks=n)
        task = inner_task
    else:
        st = stmts[calls[0]]
        c = _stmt_call(st)
        callee = _callee(p, c.op.name)
        if callee is not None and callee.type is not FunctionType.InCore:
            raise p.error(f"pl.spmd launches InCore kernels; '{c.op.name}' is a {callee.type.name} "
                             "function", node)
        c = replace(c, kwargs={**c.kwargs, "blocks": n})
        stmts[calls[0]] = replace(st, value=c) if isinstance(st, St.AssignStmt) else replace(st, expr=c)
        task = tasks.record_task(p, node, tasks.TaskId(hint or c.op.name, p.span(node).line, set(deps),
                                                          _call_touches(p, c, callee)))
    for x in stmts:
        p.emit(x)
    return task


def _call_touches(p: Any, call: E.Call, callee: St.Function | None) -> tuple[set, set]:
    """(read, written) accesses of a kernel call, by the callee's parameter directions."""
    dirs = list(callee.param_directions) if callee is not None else None
    if dirs is None and p.program is not None and call.op.name in p.program.signatures:
        dirs = list(p.program.signatures[call.op.name][1].directions)
    return tasks.call_touches(p, call, dirs)


def _callee(p: Any, name: str) -> St.Function | None:
    ext = p.program.externals.get(name) if p.program is not None else None
    return ext[1] if ext is not None else None


def _dispatches(p: Any, stmts: list) -> bool:
    """Whether ``stmts`` holds a ``pl.at`` region or a call of a kernel (else it is inline SPMD code)."""
    for n in (x for s in stmts for x in ast.walk(s)):
        if isinstance(n, ast.With) and any(p._is_helper_call(i.context_expr, "at") for i in n.items):
            return True
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name) \
                and n.func.value.id == "self" and "self" not in p.env:
            return True
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id not in p.env:
            found, obj = p.ns.lookup(n.func.id)
            if found and (isinstance(obj, St.Function) or getattr(obj, "kind", None) in ("incore", "opaque")):
                return True
    return False
