"""Generic traversal: a visitor that dispatches on class name and a mutator that rebuilds on change.

Both find children through ``dataclasses.fields``, so a new node kind needs no edits here. The mutator
returns the same object when nothing below it changed (``new is old`` means unchanged).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from typing import Any, ClassVar

from pypto.ir.expr import Expr, IterArg, Var
from pypto.ir.stmt import Function, OpStmts, SeqStmts, Stmt

_NODE = (Expr, Stmt, Function)


def _child_values(node: Any) -> Iterator[Any]:
    for f in dataclasses.fields(node):
        if f.name in ("type", "span", "kwargs", "op"):
            continue
        v = getattr(node, f.name)
        if isinstance(v, _NODE):
            yield v
        elif isinstance(v, tuple):
            for x in v:
                if isinstance(x, _NODE):
                    yield x


class IRVisitor:
    """Calls ``visit_<ClassName>`` when defined, else visits children."""

    _cache: ClassVar[dict] = {}

    def visit(self, node: Any) -> Any:
        key = (type(self), type(node))
        meth = IRVisitor._cache.get(key)
        if meth is None:
            meth = None
            for cls in type(node).__mro__:
                meth = getattr(type(self), "visit_" + cls.__name__, None)
                if meth is not None:
                    break
            meth = meth or type(self).generic_visit
            IRVisitor._cache[key] = meth
        return meth(self, node)

    def generic_visit(self, node: Any) -> None:
        for child in _child_values(node):
            self.visit(child)


class IRMutator:
    """Rebuilds nodes bottom-up; override ``visit_<ClassName>`` or ``mutate_var``."""

    def mutate_var(self, var: Var) -> Any:
        return var

    def visit(self, node: Any) -> Any:
        meth = None
        for cls in type(node).__mro__:
            meth = getattr(self, "visit_" + cls.__name__, None)
            if meth is not None:
                break
        if meth is not None:
            return meth(node)
        return self.generic_visit(node)

    def visit_Var(self, node: Var) -> Any:
        return self.mutate_var(node)

    def generic_visit(self, node: Any) -> Any:
        if not isinstance(node, _NODE):
            return node
        changes = {}
        for f in dataclasses.fields(node):
            if f.name in ("type", "span", "kwargs", "op") or not f.init:
                continue
            v = getattr(node, f.name)
            if isinstance(v, _NODE):
                nv = self.visit(v)
                if nv is not v:
                    changes[f.name] = nv
            elif isinstance(v, tuple) and any(isinstance(x, _NODE) for x in v):
                nt = tuple(self.visit(x) if isinstance(x, _NODE) else x for x in v)
                if any(a is not b for a, b in zip(nt, v, strict=False)):
                    changes[f.name] = nt
        if not changes:
            return node
        return dataclasses.replace(node, **changes)


class VarSubstituter(IRMutator):
    """Replaces variables (definitions and uses) through a mapping."""

    def __init__(self, mapping: dict):
        self.mapping = mapping

    def mutate_var(self, var: Var) -> Any:
        if var in self.mapping:
            return self.mapping[var]
        retyped = self._valid_shape_type(var.type)
        if retyped is not var.type:  # a run-time valid extent names a substituted scalar
            init = self.visit(var.init_value) if isinstance(var, IterArg) and var.init_value is not None else None
            new = IterArg(var.name, retyped, var.span, init) if isinstance(var, IterArg) else Var(var.name, retyped,
                                                                                                  var.span)
            self.mapping[var] = new
            return new

        if isinstance(var, IterArg) and var.init_value is not None:
            init = self.visit(var.init_value)
            if init is not var.init_value:
                new = IterArg(var.name, var.type, var.span, init)
                self.mapping[var] = new
                return new
        return var


    def _valid_shape_type(self, t: Any) -> Any:
        """``t`` with the scalars in a tile's valid shape substituted (the same object when none is)."""
        view = getattr(t, "tile_view", None)
        if view is None or not view.valid_shape:
            return t
        dims = tuple(self.visit(d) if isinstance(d, _NODE) else d for d in view.valid_shape)
        if all(a is b for a, b in zip(dims, view.valid_shape, strict=True)):
            return t
        return dataclasses.replace(t, tile_view=dataclasses.replace(view, valid_shape=dims))


def substitute(node: Any, mapping: dict) -> Any:
    return VarSubstituter(mapping).visit(node) if mapping else node


def walk(node: Any) -> Iterator[Any]:
    """All nodes below ``node`` (pre-order), including expressions."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(list(_child_values(n))))


def walk_stmts(stmt: Any) -> Iterator[Stmt]:
    for n in walk(stmt):
        if isinstance(n, Stmt):
            yield n


def stmt_list(body: Any) -> tuple:
    if isinstance(body, (SeqStmts, OpStmts)):
        out = []
        for s in body.stmts:
            out.extend(stmt_list(s) if isinstance(s, (SeqStmts, OpStmts)) else [s])
        return tuple(out)
    return () if body is None else (body,)


def map_function_bodies(program: Any, fn: Callable[[Function], Function]) -> Any:
    return program.with_functions(fn(f) for f in program.functions_list)
