"""OutlineTensorOps: every computing tensor op of an Orchestration function becomes a kernel launch.

Orchestration code runs on the host, which only orchestrates: it calls kernels, runs scalar
control flow and allocates tensors and views of them (``HOST_TENSOR_OPS``). A computing tensor op
written there (``pl.add(a, b)``, ``pl.matmul(x, w)``, ``pl.exp(t)``, ...) must run where compute runs,
so it is emulated, timed and checked, and appears in the generated orchestration C++ as a task.
This pass wraps each such op in an InCore scope and outlines it with the machinery of
:mod:`pypto.passes.outline_incore_scopes` (parameters and results derived from how variables cross
the boundary) into a kernel ``<parent>_<op>``; ConvertTensorToBlockOps then tiles the op inside it
like any tensor op written in an InCore function, and gives its result an ``Out`` tensor that the
call site allocates.

Every computing op is one kernel: merging consecutive kernels is the fusion pass's business. An op
nested in another call (``self.k(pl.add(a, b))``, ``pl.exp(pl.mul(a, b))``) is first bound to a
name of its own, innermost first.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, ClassVar

from pypto.enums import FunctionType, ScopeKind
from pypto.ir import expr as E
from pypto.ir import stmt as St
from pypto.ir.visitor import walk
from pypto.passes.base import NameAllocator, Pass
from pypto.passes.block_rewriter import BlockRewriter
from pypto.passes.ir_utils import all_names
from pypto.passes.outline_incore_scopes import outline_functions

# Tensor ops the host runs itself: allocation, shape queries, element reads and writes, and views.
HOST_TENSOR_OPS = frozenset({
    "tensor.create", "tensor.dim", "tensor.read", "tensor.write", "tensor.view", "tensor.assemble", "tensor.reshape",
    "tensor.transpose",
})


def is_compute_op(e: Any) -> bool:
    """A tensor op that computes (everything of the tensor namespace but ``HOST_TENSOR_OPS``)."""
    return (isinstance(e, E.Call) and not isinstance(e.op, E.GlobalVar) and e.op.name.startswith("tensor.")
            and e.op.name not in HOST_TENSOR_OPS)


class _Wrapper(BlockRewriter):
    """Rewrites one function: nested compute ops bound to names, each compute op in its own scope."""

    def __init__(self, func: St.Function):
        self.func = func
        self.names = NameAllocator(all_names(func))

    def stmt(self, s: Any) -> list:
        if isinstance(s, (St.ForStmt, St.WhileStmt, St.IfStmt)):
            return [self.descend(s)]
        if isinstance(s, St.ScopeStmt):
            return [s if s.scope_kind is ScopeKind.InCore else self.descend(s)]
        if isinstance(s, St.AssignStmt) and isinstance(s.value, E.Call):
            pre: list = []
            value = self.hoist_args(s.value, pre)
            if is_compute_op(value):
                return pre + [self.scope(replace(s, value=value))]
            return pre + [replace(s, value=value)] if pre else [s]
        if isinstance(s, St.EvalStmt) and isinstance(s.expr, E.Call):
            pre = []
            value = self.hoist_args(s.expr, pre)
            return pre + [replace(s, expr=value)] if pre else [s]
        if isinstance(s, (St.YieldStmt, St.ReturnStmt)):
            pre = []
            values = tuple(self.hoist(v, pre) for v in s.value)
            return pre + [replace(s, value=values)] if pre else [s]
        return [s]

    def hoist_args(self, call: E.Call, pre: list) -> E.Call:
        args = tuple(self.hoist(a, pre) for a in call.args)
        return call if all(x is y for x, y in zip(args, call.args, strict=True)) else replace(call, args=args)

    def hoist(self, e: Any, pre: list) -> Any:
        """``e`` with every compute op inside it bound to a new name (its scope appended to ``pre``)."""
        if isinstance(e, E.MakeTuple):
            elems = tuple(self.hoist(x, pre) for x in e.elements)
            return e if all(x is y for x, y in zip(elems, e.elements, strict=True)) else replace(e, elements=elems)
        if not isinstance(e, E.Call):
            return e
        e = self.hoist_args(e, pre)
        if not is_compute_op(e):
            return e
        v = E.Var(self.names.fresh(e.op.name.split(".", 1)[1]), e.type, e.span)
        pre.append(self.scope(St.AssignStmt(v, e, e.span)))
        return v

    def scope(self, s: St.AssignStmt) -> St.ScopeStmt:
        name = f"{self.func.name}_{s.value.op.name.split('.', 1)[1]}"
        return St.ScopeStmt(ScopeKind.InCore, St.SeqStmts((s,), s.span), s.span, name_hint=name)


def _has_compute_op(func: St.Function) -> bool:
    return any(is_compute_op(n) for n in walk(func.body))


@dataclass(frozen=True)
class OutlineTensorOpsPass(Pass):
    name: ClassVar[str] = "outline-tensor-ops"
    dump_name: ClassVar[str] = "OutlineTensorOps"

    def run(self, program: St.Program) -> St.Program:
        return outline_functions(program, lambda f: f.type is FunctionType.Orchestration and _has_compute_op(f),
                                 lambda f: replace(f, body=_Wrapper(f).block(f.body)))
