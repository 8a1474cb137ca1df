"""UnrollLoops: every ``pl.unroll`` loop (``ForKind.Unroll``, no ``chunk``) becomes one copy of its
body per iteration, the loop variable replaced by its constant value.

The pass runs on SSA form (right after ConvertToSSA) rather than before it as in the reference
pipeline: here a variable is an object, not a name, so a copy of a body that re-assigns an outer
name would still read the *outer* object in every copy. In SSA form the loop-carried values are
explicit iter args, and unrolling is exact: copy ``k`` reads what copy ``k - 1`` yielded, the loop's
return vars become the last copy's yielded values (the init values for an empty range), and each
copy gets fresh definitions so the result is still SSA.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, ClassVar

from pypto.dtype import DataType
from pypto.enums import ForKind
from pypto.errors import CompileError
from pypto.ir import expr as E
from pypto.ir import stmt as St
from pypto.ir.visitor import walk_stmts
from pypto.passes.base import NameAllocator, Pass
from pypto.passes.block_rewriter import BlockRewriter, clone_iteration
from pypto.passes.ir_utils import all_names, fold

# A guard against unrolling a loop into an absurd amount of code by mistake (pl.unroll(100000)).
MAX_UNROLL = 4096


class _Unroller(BlockRewriter):
    def __init__(self, func: St.Function):
        self.names = NameAllocator(all_names(func))
        # return var of an unrolled loop -> the value it stands for; applied to every later statement
        self.pending: dict = {}

    def stmt(self, s: Any) -> list:
        s = self.descend(s)
        if isinstance(s, St.ForStmt) and s.kind is ForKind.Unroll and s.chunk_size is None:
            return self.unroll(s)
        return [s]

    def unroll(self, s: St.ForStmt) -> list:
        bounds = [E.static_int(fold(x)) for x in (s.start, s.stop, s.step)]
        if None in bounds:
            raise CompileError("pl.unroll needs constant start, stop and step (they decide how many copies to make)",
                               s.span)
        start, stop, step = bounds
        if step == 0:
            raise CompileError("pl.unroll: step must not be zero", s.span)
        values = list(range(start, stop, step))
        if len(values) > MAX_UNROLL:
            raise CompileError(f"pl.unroll over {len(values)} iterations exceeds the limit of {MAX_UNROLL}; "
                               "use pl.range", s.span)
        cur = [ia.init_value for ia in s.iter_args]
        out: list = []
        for k, v in enumerate(values):
            stmts, cur = clone_iteration(s, E.ConstInt(v, DataType.INDEX, s.span), cur, self.names, f"_u{k}")
            out.extend(stmts)
        self.pending.update(zip(s.return_vars, cur, strict=False))
        return out


@dataclass(frozen=True)
class UnrollLoopsPass(Pass):
    name: ClassVar[str] = "unroll-loops"
    dump_name: ClassVar[str] = "UnrollLoops"

    def run_function(self, func: St.Function) -> St.Function:
        if not any(isinstance(s, St.ForStmt) and s.kind is ForKind.Unroll for s in walk_stmts(func.body)):
            return func
        u = _Unroller(func)
        return replace(func, body=u.block(func.body))

