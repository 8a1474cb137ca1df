"""Front-end checks run before the passes, so a misplaced op is reported at the user's line."""

from __future__ import annotations

from pypto.enums import FunctionType
from pypto.errors import CompileError
from pypto.ir import expr as E
from pypto.ir import stmt as St
from pypto.ir.visitor import walk


def check_orchestration(program: St.Program) -> None:
    """Reject tile (``block.*``) ops in Orchestration functions.

    Orchestration code runs on the host and has no on-chip memory, so a tile there can never get a
    buffer; without this check the mistake surfaces later as "tile 't' has no MemRef" with no hint
    of what to do.
    """
    for f in program.functions_list:
        if f.type is not FunctionType.Orchestration:
            continue
        # an InCore scope inside the function is outlined into a kernel, so its tile ops are fine
        scoped = {id(x) for sc in walk(f.body) if isinstance(sc, St.ScopeStmt) for x in walk(sc.body)}
        for n in walk(f.body):
            if id(n) in scoped:
                continue
            if isinstance(n, E.Call) and not isinstance(n.op, E.GlobalVar) and n.op.name.startswith("block."):
                short = n.op.name.split(".", 1)[1]
                raise CompileError(
                    f"pl.{short} is a tile op: tile ops belong in InCore kernels "
                    f"(@pl.function(type=pl.FunctionType.InCore)), not in the Orchestration function '{f.name}'",
                    n.span,
                )
