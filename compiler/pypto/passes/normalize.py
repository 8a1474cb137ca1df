"""Pre-memory normalisation used by InitMemRef.

* ``block.sum/max/min`` over the last axis (keepdim) become a scratch ``create_tile`` plus
  ``row_sum/row_max/row_min`` (PTO row reductions need a tmp tile).
* Loop-carried and if-merged Vec tiles share one buffer; an incoming value that cannot safely live
  in that buffer (used elsewhere, or the carried value is still read after it is defined) is first
  copied with ``block.move(..., Vec)``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Any

from pypto.enums import MemorySpace
from pypto.ir import expr as E
from pypto.ir import stmt as St
from pypto.ir.types import TileType
from pypto.ir.visitor import stmt_list, walk
from pypto.ops import block as B

_ROW = {"block.sum": "row_sum", "block.max": "row_max", "block.min": "row_min"}


def _space(value: Any) -> MemorySpace | None:
    from pypto.passes.init_memref import _space_of_def

    return _space_of_def(value)


class Normalizer:
    def __init__(self, func: St.Function):
        self.uses = Counter(n for n in walk(func.body) if isinstance(n, E.Var))
        self.space: dict = {}
        for n in walk(func.body):
            if isinstance(n, St.AssignStmt):
                self.space[n.var] = _space(n.value)
        self.counter = 0

    def is_vec(self, v: Any) -> bool:
        return isinstance(getattr(v, "type", None), TileType) and self.space.get(v, MemorySpace.Vec) in (
            MemorySpace.Vec, None,
        )

    def copy(self, v: E.Var, span: Any) -> tuple[St.AssignStmt, E.Var]:
        call = B.move(v, MemorySpace.Vec, span=span)
        self.counter += 1
        nv = E.Var(f"{v.name}_phi{self.counter}", call.type, span)
        self.space[nv] = MemorySpace.Vec
        return St.AssignStmt(nv, call, span), nv

    def block(self, body: Any, carried: tuple = ()) -> St.SeqStmts:
        out: list = []
        for s in stmt_list(body):
            out.extend(self.stmt(s))
        return St.SeqStmts(tuple(out), getattr(body, "span", None))

    def stmt(self, s: Any) -> list:
        if isinstance(s, St.AssignStmt) and isinstance(s.value, E.Call) and s.value.op.name in _ROW:
            c = s.value
            t = c.args[0].type
            axis = c.kwargs.get("axis", 0) % len(t.shape)
            if axis == len(t.shape) - 1 and len(t.shape) == 2 and c.kwargs.get("keepdim", False):
                tmp_call = B.create_tile(list(t.shape), t.dtype, MemorySpace.Vec, span=s.span)
                self.counter += 1
                tmp = E.Var(f"{s.var.name}_tmp{self.counter}", tmp_call.type, s.span)
                red = getattr(B, _ROW[c.op.name])(c.args[0], tmp, span=s.span)
                return [St.AssignStmt(tmp, tmp_call, s.span), St.AssignStmt(s.var, red, s.span)]
            return [s]
        if isinstance(s, (St.ForStmt, St.WhileStmt)):
            pre, new_ias = [], []
            for ia in s.iter_args:
                init = ia.init_value
                if self.is_vec(ia) and isinstance(init, E.Var) and (
                    self.uses[init] > 2 or isinstance(init, E.IterArg) or init not in self.space
                ):
                    st, nv = self.copy(init, s.span)
                    pre.append(st)
                    new_ias.append((ia, nv))
            body = self.block(s.body)
            body = self.fix_yield(body, s.iter_args, loop=True)
            s = replace(s, body=body)
            if new_ias:
                from pypto.ir.visitor import substitute

                mapping = {ia: E.IterArg(ia.name, ia.type, ia.span, nv) for ia, nv in new_ias}
                s = substitute(s, mapping)
            return pre + [s]
        if isinstance(s, St.IfStmt):
            tb = self.fix_yield(self.block(s.then_body), s.return_vars, loop=False)
            eb = self.fix_yield(self.block(s.else_body), s.return_vars, loop=False) if s.else_body else None
            return [replace(s, then_body=tb, else_body=eb)]
        if isinstance(s, St.ScopeStmt):
            return [replace(s, body=self.block(s.body))]
        return [s]

    def fix_yield(self, body: St.SeqStmts, phis: tuple, loop: bool) -> St.SeqStmts:
        stmts = list(body.stmts)
        if not stmts or not isinstance(stmts[-1], St.YieldStmt):
            return body
        y = stmts.pop()
        defs = {st.var: i for i, st in enumerate(stmts) if isinstance(st, St.AssignStmt)}
        values = list(y.value)
        for k, (phi, v) in enumerate(zip(phis, values)):
            if not self.is_vec(phi) or not isinstance(v, E.Var):
                continue
            safe = v in defs and self.uses[v] == 2 and self.space.get(v) is not None
            if safe and loop:
                later = stmts[defs[v] + 1 :]
                safe = not any(n is phi for st in later for n in walk(st))
                if safe:
                    d = stmts[defs[v]]
                    safe = not (isinstance(d.value, E.Call) and d.value.op.name == "block.load"
                                and any(n is phi for n in walk(d)))
            if not safe:
                st, nv = self.copy(v, y.span)
                stmts.append(st)
                values[k] = nv
        stmts.append(St.YieldStmt(tuple(values), y.span))
        return St.SeqStmts(tuple(stmts), body.span)


def normalize(func: St.Function) -> St.Function:
    return replace(func, body=Normalizer(func).block(func.body))
