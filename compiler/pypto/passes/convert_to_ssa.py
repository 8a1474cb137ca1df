"""ConvertToSSA: every name is defined once; re-assigned names become loop iter args / if phis."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, ClassVar

from pypto.errors import CompileError
from pypto.ir import expr as E
from pypto.ir import stmt as St
from pypto.ir.types import TensorType, TileType
from pypto.ir.visitor import VarSubstituter, stmt_list, walk_stmts
from pypto.passes.base import NameAllocator, Pass


def _assigned_names(body: Any) -> list[str]:
    out: list[str] = []
    for s in walk_stmts(body):
        names = []
        if isinstance(s, St.AssignStmt):
            names = [s.var.name]
        elif isinstance(s, (St.IfStmt, St.ForStmt, St.WhileStmt)):
            names = [v.name for v in s.return_vars]
        for n in names:
            if n not in out:
                out.append(n)
    return out


def _defined_objects(body: Any, name: str) -> list:
    out = []
    for s in walk_stmts(body):
        if isinstance(s, St.AssignStmt) and s.var.name == name:
            out.append(s.var)
        elif isinstance(s, (St.IfStmt, St.ForStmt, St.WhileStmt)):
            out.extend(v for v in s.return_vars if v.name == name)
    return out


class _SSA:
    def __init__(self, func: St.Function):
        self.names = NameAllocator({p.name for p in func.params})
        self.subst: dict = {}
        self.env: dict[str, E.Var] = {p.name: p for p in func.params}
        self.orig: dict[str, E.Var] = {p.name: p for p in func.params}

    def e(self, x: Any) -> Any:
        return VarSubstituter(self.subst).visit(x) if isinstance(x, E.Expr) else x

    def t(self, ty: Any) -> Any:
        """``ty`` with renamed variables substituted in its shape and valid shape.

        A dynamic ``valid_shapes=[n, C]`` puts the scalar ``n`` into the tile's type; once ``n`` is
        renamed, the type must name the new variable or code generation cannot find its value.
        """
        if not isinstance(ty, (TileType, TensorType)) or not self.subst:
            return ty
        shape = tuple(self.e(d) for d in ty.shape)
        changed = any(a is not b for a, b in zip(shape, ty.shape, strict=False))
        out = replace(ty, shape=shape) if changed else ty
        view = getattr(ty, "tile_view", None)
        if view is not None and view.valid_shape:
            vs = tuple(self.e(d) for d in view.valid_shape)
            if any(a is not b for a, b in zip(vs, view.valid_shape, strict=False)):
                out = replace(out, tile_view=replace(view, valid_shape=vs))
        return out

    def new_var(self, old: E.Var, name: str | None = None) -> E.Var:
        return E.Var(self.names.fresh(name or old.name), self.t(old.type), old.span)

    def block(self, body: Any) -> St.SeqStmts:
        out: list = []
        for s in stmt_list(body):
            out.extend(self.stmt(s))
        return St.SeqStmts(tuple(out), getattr(body, "span", E.UNKNOWN_SPAN))

    def stmt(self, s: Any) -> list:
        if isinstance(s, St.AssignStmt):
            value = self.e(s.value)
            nv = self.new_var(s.var)
            self.subst[s.var] = nv
            self.env[s.var.name] = nv
            self.orig[s.var.name] = s.var
            return [St.AssignStmt(nv, value, s.span)]
        if isinstance(s, St.EvalStmt):
            return [St.EvalStmt(self.e(s.expr), s.span)]
        if isinstance(s, St.ReturnStmt):
            return [St.ReturnStmt(tuple(self.e(v) for v in s.value), s.span)]
        if isinstance(s, St.YieldStmt):
            return [St.YieldStmt(tuple(self.e(v) for v in s.value), s.span)]
        if isinstance(s, St.ForStmt):
            return [self.for_stmt(s)]
        if isinstance(s, St.WhileStmt):
            return [self.while_stmt(s)]
        if isinstance(s, St.IfStmt):
            return [self.if_stmt(s)]
        if isinstance(s, St.ScopeStmt):
            return [replace(s, body=self.block(s.body))]
        if isinstance(s, (St.SeqStmts, St.OpStmts)):
            return list(self.block(s).stmts)
        return [s]

    def _carried(self, body: Any, explicit: tuple) -> list[str]:
        exp = {ia.name for ia in explicit}
        return [n for n in _assigned_names(body) if n in self.env and n not in exp]

    def _loop_body(self, s: Any, carried: list[str], iter_args: list) -> tuple[St.SeqStmts, list]:
        """Process a loop body with carried names bound to new iter args; returns body and yields."""
        # the variables the carried names stand for before the loop: the body may rebind a name to a new
        # variable (self.orig moves on), and what is restored afterwards is the mapping of these
        origs = {n: self.orig[n] for n in carried}
        saved = {n: self.subst.get(origs[n]) for n in carried}
        for n, ia in zip(carried, iter_args, strict=False):
            self.subst[origs[n]] = ia
            self.env[n] = ia
        body = self.block(s.body)
        stmts = list(body.stmts)
        extra = [self.env[n] for n in carried]
        if stmts and isinstance(stmts[-1], St.YieldStmt):
            y = stmts.pop()
            stmts.append(St.YieldStmt(tuple(y.value) + tuple(extra), y.span))
        elif extra:
            stmts.append(St.YieldStmt(tuple(extra), s.span))
        for n, prev in saved.items():
            if prev is None:
                self.subst.pop(origs[n], None)
            else:
                self.subst[origs[n]] = prev
        return St.SeqStmts(tuple(stmts), body.span), extra

    def _forget_loop_locals(self, before: set[str]) -> None:
        """Names first assigned inside a loop body are that body's values: the .pto scopes them to
        the loop's region, so after the loop they are no value a later loop may carry in (a later
        loop that assigns the name again gets a fresh one instead of an iter_arg initialised with a
        value from out of scope)."""
        for n in [n for n in self.env if n not in before]:
            del self.env[n]

    def _bind_after(self, body_nodes: list, carried: list[str], rvs: list) -> None:
        for n, rv in zip(carried, rvs, strict=False):
            objs = [o for b in body_nodes if b is not None for o in _defined_objects(b, n)]
            for o in objs:
                self.subst[o] = rv
            if objs:
                self.orig[n] = objs[-1]
            self.env[n] = rv

    def for_stmt(self, s: St.ForStmt) -> St.ForStmt:
        start, stop, step = self.e(s.start), self.e(s.stop), self.e(s.step)
        lv = self.new_var(s.loop_var)
        self.subst[s.loop_var] = lv
        explicit = []
        for ia in s.iter_args:
            nia = E.IterArg(self.names.fresh(ia.name), self.t(ia.type), ia.span, self.e(ia.init_value))
            self.subst[ia] = nia
            explicit.append(nia)
        carried = self._carried(s.body, s.iter_args)
        new_ias = [
            E.IterArg(self.names.fresh(n), self.t(self.env[n].type), s.span, self.env[n]) for n in carried
        ]
        before = set(self.env)
        body, _ = self._loop_body(s, carried, new_ias)
        self._forget_loop_locals(before)
        rvs = []
        for rv in s.return_vars:
            nrv = self.new_var(rv)
            self.subst[rv] = nrv
            rvs.append(nrv)
        extra_rvs = [E.Var(self.names.fresh(n), ia.type, s.span) for n, ia in zip(carried, new_ias, strict=False)]
        self._bind_after([s.body], carried, extra_rvs)
        return St.ForStmt(
            lv, start, stop, step, tuple(explicit + new_ias), body, tuple(rvs + extra_rvs), s.span, s.kind,
            s.chunk_size, s.chunk_policy, s.loop_origin, s.power2,
        )

    def while_stmt(self, s: St.WhileStmt) -> St.WhileStmt:
        explicit = []
        for ia in s.iter_args:
            nia = E.IterArg(self.names.fresh(ia.name), self.t(ia.type), ia.span, self.e(ia.init_value))
            self.subst[ia] = nia
            explicit.append(nia)
        carried = self._carried(s.body, s.iter_args)
        new_ias = [E.IterArg(self.names.fresh(n), self.t(self.env[n].type), s.span, self.env[n]) for n in carried]
        for n, ia in zip(carried, new_ias, strict=False):
            self.subst[self.orig[n]] = ia
        cond = self.e(s.condition)
        before = set(self.env)
        body, _ = self._loop_body(s, carried, new_ias)
        self._forget_loop_locals(before)
        rvs = []
        for rv in s.return_vars:
            nrv = self.new_var(rv)
            self.subst[rv] = nrv
            rvs.append(nrv)
        extra_rvs = [E.Var(self.names.fresh(n), ia.type, s.span) for n, ia in zip(carried, new_ias, strict=False)]
        self._bind_after([s.body], carried, extra_rvs)
        return St.WhileStmt(cond, tuple(explicit + new_ias), body, tuple(rvs + extra_rvs), s.span)

    def if_stmt(self, s: St.IfStmt) -> St.IfStmt:
        cond = self.e(s.condition)
        then_names = _assigned_names(s.then_body)
        else_names = _assigned_names(s.else_body) if s.else_body is not None else []
        explicit = {v.name for v in s.return_vars}
        phis = [
            n for n in dict.fromkeys(then_names + else_names)
            if n not in explicit and (n in self.env or (n in then_names and n in else_names))
        ]
        before = dict(self.env)
        branches = []
        for body in (s.then_body, s.else_body):
            self.env = dict(before)
            nb = self.block(body) if body is not None else St.SeqStmts((), s.span)
            stmts = list(nb.stmts)
            extra = tuple(self.env[n] for n in phis if n in self.env)
            if len(extra) != len(phis):
                missing = [n for n in phis if n not in self.env]

                raise CompileError(f"'{missing[0]}' is assigned in only one branch of the if", s.span)
            if stmts and isinstance(stmts[-1], St.YieldStmt):
                y = stmts.pop()
                stmts.append(St.YieldStmt(tuple(y.value) + extra, y.span))
            elif extra:
                stmts.append(St.YieldStmt(extra, s.span))
            branches.append(St.SeqStmts(tuple(stmts), nb.span) if (body is not None or extra) else None)
            if body is s.then_body:
                then_env = dict(self.env)
        self.env = dict(before)
        self.env.update({k: v for k, v in then_env.items() if k not in self.env})
        rvs = []
        for rv in s.return_vars:
            nrv = self.new_var(rv)
            self.subst[rv] = nrv
            rvs.append(nrv)
        extra_rvs = [E.Var(self.names.fresh(n), (before.get(n) or then_env[n]).type, s.span) for n in phis]
        self._bind_after([s.then_body, s.else_body], phis, extra_rvs)
        return St.IfStmt(cond, branches[0], branches[1], tuple(rvs + extra_rvs), s.span)


@dataclass(frozen=True)
class ConvertToSSAPass(Pass):
    name: ClassVar[str] = "convert-to-ssa"
    dump_name: ClassVar[str] = "ConvertToSSA"

    def run_function(self, func: St.Function) -> St.Function:
        ssa = _SSA(func)
        body = ssa.block(func.body)
        return St.Function(
            func.name, tuple(zip(func.params, func.param_directions, strict=False)), func.return_types, body, func.span, func.type,
            split_mode=func.split_mode, slot_num=func.slot_num
        )
