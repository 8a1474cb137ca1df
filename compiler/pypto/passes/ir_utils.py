"""Helpers shared by the structural passes (UnrollLoops, OutlineIncoreScopes, ConvertTensorToBlockOps):
which variables a region defines and which it reads from outside, fresh copies of a region's
definitions, and folding of constant index arithmetic.

They work on SSA form, where every variable object is defined exactly once, so "defined inside" and
"read from outside" are plain set questions on variable identity.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from pypto.ir import expr as E
from pypto.ir import stmt as St
from pypto.ir.types import TensorType, TileType
from pypto.ir.visitor import IRMutator, _child_values, substitute, walk, walk_stmts
from pypto.passes.base import NameAllocator


def stmt_defs(s: Any) -> list[E.Var]:
    """The variables one statement defines itself (not those of nested statements)."""
    if isinstance(s, St.AssignStmt):
        return [s.var]
    if isinstance(s, St.ForStmt):
        return [s.loop_var, *s.iter_args, *s.return_vars]
    if isinstance(s, St.WhileStmt):
        return [*s.iter_args, *s.return_vars]
    if isinstance(s, St.IfStmt):
        return list(s.return_vars)
    return []


def definitions(node: Any) -> list[E.Var]:
    """Every variable defined in ``node`` (nested statements included), in program order."""
    return [v for s in walk_stmts(node) for v in stmt_defs(s)]


def used_vars(node: Any, skip: Any = None) -> dict:
    """Variables referenced by ``node`` (ordered, as dict keys), not descending into ``skip``.

    A reference to a loop-carried ``IterArg`` is a use of that iter arg only; its init value counts as
    a use where the loop is (where the iter arg is defined), not at every reference.
    """
    out: dict = {}
    stack = [node]
    while stack:
        n = stack.pop()
        if n is skip:
            continue
        if isinstance(n, E.Var):
            out.setdefault(n, None)
            continue
        kids = list(_child_values(n))
        if isinstance(n, (St.ForStmt, St.WhileStmt)):
            kids = [ia.init_value for ia in n.iter_args if ia.init_value is not None] + kids
        stack.extend(reversed(kids))
    return out


def type_vars(t: Any) -> list[E.Var]:
    """Variables a shaped type mentions (dynamic dims, run-time valid shapes)."""
    if not isinstance(t, (TensorType, TileType)):
        return []
    dims = list(t.shape)
    if isinstance(t, TileType) and t.tile_view is not None:
        dims += list(t.tile_view.valid_shape)
    return [n for d in dims for n in walk(d) if isinstance(n, E.Var)]


_FOLD = {
    "Add": lambda a, b: a + b, "Sub": lambda a, b: a - b, "Mul": lambda a, b: a * b,
    "FloorDiv": lambda a, b: a // b if b else None, "FloorMod": lambda a, b: a % b if b else None,
    "Min": min, "Max": max,
}


class _Folder(IRMutator):
    def visit_BinaryExpr(self, node: E.BinaryExpr) -> Any:
        new = self.generic_visit(node)
        fn = _FOLD.get(type(new).__name__)
        a, b = E.static_int(new.left), E.static_int(new.right)
        if fn is None or a is None or b is None or new.dtype.is_float():
            return new
        v = fn(a, b)
        return new if v is None else E.ConstInt(v, new.dtype, new.span)


def fold(node: Any) -> Any:
    """``node`` with integer arithmetic on constants evaluated (``3 * 16`` -> ``48``).

    Unrolling substitutes constants for loop variables; folding keeps offsets and valid shapes static,
    so bounds checks and static tile views still apply to the unrolled copies.
    """
    return _Folder().visit(node)


def subst_type(t: Any, mapping: dict) -> Any:
    """``t`` with variables in its shape / valid shape replaced through ``mapping`` (then folded)."""
    if not isinstance(t, (TensorType, TileType)) or not mapping:
        return t

    def dims(ds: tuple) -> tuple:
        return tuple(fold(substitute(d, dict(mapping))) for d in ds)

    shape = dims(t.shape)
    out = replace(t, shape=shape) if any(a is not b for a, b in zip(shape, t.shape, strict=False)) else t
    view = getattr(t, "tile_view", None)
    if view is not None and view.valid_shape:
        vs = dims(view.valid_shape)
        if any(a is not b for a, b in zip(vs, view.valid_shape, strict=False)):
            out = replace(out, tile_view=replace(view, valid_shape=vs))
    return out


def clone_definitions(node: Any, mapping: dict, names: NameAllocator, suffix: str = "") -> Any:
    """``node`` with every variable it defines replaced by a fresh one (unique name, same type).

    ``mapping`` holds substitutions to apply as well (e.g. a loop variable -> a constant) and is
    extended with old -> new for every definition. Used when a region is duplicated so that the SSA
    form (one definition per variable and per name) survives.
    """
    for v in definitions(node):
        t = subst_type(v.type, mapping)
        name = names.fresh(f"{v.name}{suffix}")
        if isinstance(v, E.IterArg):
            init = fold(substitute(v.init_value, dict(mapping))) if v.init_value is not None else None
            mapping[v] = E.IterArg(name, t, v.span, init)
        else:
            mapping[v] = E.Var(name, t, v.span)
    return fold(substitute(node, dict(mapping)))


def all_names(func: St.Function) -> set[str]:
    """Every variable name used in ``func``: new definitions must avoid them to stay SSA (one name,
    one definition)."""
    return {n.name for n in walk(func) if isinstance(n, E.Var)} | {p.name for p in func.params}
