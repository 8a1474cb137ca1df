"""The statement-list walk that the structural passes share, and the copy of one loop iteration.

:class:`BlockRewriter` rewrites a statement tree block by block: ``block(body)`` maps every statement
through ``stmt(s) -> [statements]`` (after the substitutions of ``pending``: values that earlier
rewrites gave the results of removed statements, such as an expanded loop's return vars) and
``descend(s)`` rewrites the bodies of loops, ifs and scopes the same way. A pass overrides ``stmt``
for the statements it changes and descends into the rest.

:func:`clone_iteration` is the copy of a loop body for one iteration (the loop variable a given
index, the iter args the values carried in, fresh definitions so the program stays SSA) that full
unrolling (UnrollLoops), power-of-two expansion (ExpandPower2) and the SPMD launch of a parallel
loop build on.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from pypto.ir import expr as E
from pypto.ir import stmt as St
from pypto.ir.visitor import stmt_list, substitute
from pypto.passes.base import NameAllocator
from pypto.passes.ir_utils import clone_definitions


class BlockRewriter:
    """Rewrite statement lists: ``stmt`` per statement, ``descend`` into nested bodies."""

    pending: dict | None = None  # result var of a removed statement -> its value, for later statements

    def block(self, body: Any) -> St.SeqStmts:
        out: list = []
        for s in stmt_list(body):
            if self.pending:
                s = substitute(s, dict(self.pending))
            out.extend(self.stmt(s))
        return St.SeqStmts(tuple(out), getattr(body, "span", E.UNKNOWN_SPAN))

    def stmt(self, s: Any) -> list:
        return [self.descend(s)]

    def descend(self, s: Any) -> Any:
        """``s`` with the bodies it holds rewritten (a leaf statement as it is)."""
        if isinstance(s, (St.ForStmt, St.WhileStmt, St.ScopeStmt)):
            return replace(s, body=self.block(s.body))
        if isinstance(s, St.IfStmt):
            eb = self.block(s.else_body) if s.else_body is not None else None
            return replace(s, then_body=self.block(s.then_body), else_body=eb)
        return s


def clone_iteration(loop: St.ForStmt, index: Any, carried: list, names: NameAllocator,
                    suffix: str = "") -> tuple[list, list]:
    """The statements of one iteration of ``loop`` (its variable = ``index``, its iter args = ``carried``)
    with fresh definitions, and the values it yields (``carried`` when it yields nothing)."""
    mapping: dict = {loop.loop_var: index}
    mapping.update(zip(loop.iter_args, carried, strict=False))
    stmts = list(stmt_list(clone_definitions(loop.body, mapping, names, suffix)))
    if stmts and isinstance(stmts[-1], St.YieldStmt):
        last = stmts.pop()
        return stmts, list(last.value)
    return stmts, list(carried)
