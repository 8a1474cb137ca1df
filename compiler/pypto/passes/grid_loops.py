"""Clean-up after FuseLoops: one-block library loops become straight-line code, and the GM buffers that
fusion left unused disappear from the kernels' signatures.

* A library op emits its blocks as grid loops (:data:`pypto.lib.emit.GRID_LOOP`) even where a piece
  of the grid has one block (a tail, a tensor smaller than a tile), so that two ops over the same plan
  have the same loops for FuseLoops to pair. Once fusion is done such a loop is replaced by its body
  (loop variable = its start, iter args = their init values, the loop's results = the yielded
  values).
* An ``Out`` parameter that no statement of the kernel mentions any more (a library intermediate whose
  stores fusion dropped, the ``ws_<k>`` workspace ExpandLibraryOps gave it) and whose buffer nobody
  reads after the kernel (:func:`pypto.passes.launch_fusion.dead_out_params`) is removed, with the
  argument of every call and the caller's ``tensor.create`` made for it: the intermediate never has a
  GM buffer at all.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from pypto.ir import expr as E
from pypto.ir import stmt as St
from pypto.ir.visitor import stmt_list, substitute, walk, walk_stmts
from pypto.lib.emit import GRID_LOOP
from pypto.passes.block_rewriter import BlockRewriter
from pypto.passes.ir_utils import fold


class _OneBlockInliner(BlockRewriter):
    def __init__(self) -> None:
        self.pending: dict = {}

    def stmt(self, s: Any) -> list:
        s = self.descend(s)
        if not (isinstance(s, St.ForStmt) and s.loop_origin == GRID_LOOP and _trips(s) == 1):
            return [s]
        mapping: dict = {s.loop_var: fold(s.start)}
        mapping.update((ia, ia.init_value) for ia in s.iter_args)
        stmts = list(stmt_list(fold(substitute(s.body, mapping))))
        values = list(stmts.pop().value) if stmts and isinstance(stmts[-1], St.YieldStmt) else []
        self.pending.update(zip(s.return_vars, values, strict=True))
        return stmts


def inline_one_block_loops(body: Any) -> St.SeqStmts:
    """``body`` with every grid loop of one iteration replaced by its body (nested blocks included)."""
    return _OneBlockInliner().block(body)


def _trips(s: St.ForStmt) -> int | None:
    start, stop, step = (E.static_int(fold(x)) for x in (s.start, s.stop, s.step))
    if None in (start, stop, step) or step <= 0:
        return None
    return max(0, -(-(stop - start) // step))


def drop_unused_out_params(program: St.Program, dead: dict[str, set[int]]) -> St.Program:
    """``program`` without the dead ``Out`` parameters (``dead``: kernel name -> indices) that their
    kernel no longer mentions, nor their call arguments and the tensors created for them."""
    drop: dict[str, set[int]] = {}
    for f in program.functions_list:
        if f.name not in dead:
            continue
        used = {n for n in walk(f.body) if isinstance(n, E.Var)}
        idle = {k for k in dead[f.name] if f.params[k] not in used}
        if idle:
            drop[f.name] = idle
    if not drop:
        return program
    funcs = []
    for f in program.functions_list:
        if f.name in drop:
            keep = [k for k in range(len(f.params)) if k not in drop[f.name]]
            f = replace(f, params=tuple(f.params[k] for k in keep),
                        param_directions=tuple(f.param_directions[k] for k in keep))
        funcs.append(_drop_arguments(f, drop))
    return program.with_functions(funcs)


def _drop_arguments(f: St.Function, drop: dict[str, set[int]]) -> St.Function:
    """``f`` with the dropped arguments gone from its calls and their ``tensor.create`` with them."""
    gone: set = set()

    def call(e: Any) -> Any:
        if isinstance(e, E.Call) and isinstance(e.op, E.GlobalVar) and e.op.name in drop:
            gone.update(a for k, a in enumerate(e.args) if k in drop[e.op.name])
            return replace(e, args=tuple(a for k, a in enumerate(e.args) if k not in drop[e.op.name]))
        return e

    def block(node: Any) -> St.SeqStmts:
        out = []
        for s in stmt_list(node):
            if isinstance(s, (St.ForStmt, St.WhileStmt, St.ScopeStmt)):
                s = replace(s, body=block(s.body))
            elif isinstance(s, St.IfStmt):
                eb = block(s.else_body) if s.else_body is not None else None
                s = replace(s, then_body=block(s.then_body), else_body=eb)
            elif isinstance(s, St.AssignStmt):
                s = replace(s, value=call(s.value))
            elif isinstance(s, St.EvalStmt):
                s = replace(s, expr=call(s.expr))
            out.append(s)
        return St.SeqStmts(tuple(out), getattr(node, "span", E.UNKNOWN_SPAN))

    body = block(f.body)
    if not gone:
        return f
    count: dict = {}
    for n in walk(body):
        if isinstance(n, E.Var) and n in gone:
            count[n] = count.get(n, 0) + 1
    created = {s.var for s in walk_stmts(body) if _creates(s, gone)}
    body = _without(body, {v for v in created if count.get(v) == 1})  # mentioned only where it is made
    return replace(f, body=body)


def _creates(s: Any, vars_: set) -> bool:
    return (isinstance(s, St.AssignStmt) and s.var in vars_ and isinstance(s.value, E.Call)
            and not isinstance(s.value.op, E.GlobalVar) and s.value.op.name == "tensor.create")


def _without(node: Any, unused: set) -> St.SeqStmts:
    out = []
    for s in stmt_list(node):
        if _creates(s, unused):
            continue
        if isinstance(s, (St.ForStmt, St.WhileStmt, St.ScopeStmt)):
            s = replace(s, body=_without(s.body, unused))
        elif isinstance(s, St.IfStmt):
            eb = _without(s.else_body, unused) if s.else_body is not None else None
            s = replace(s, then_body=_without(s.then_body, unused), else_body=eb)
        out.append(s)
    return St.SeqStmts(tuple(out), getattr(node, "span", E.UNKNOWN_SPAN))
