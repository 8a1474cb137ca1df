"""ExpandLibraryOps: each tensor-level library op in an InCore kernel becomes its definition.

The pass is generic: for every ``x = tensor.<op>(...)`` at the top level of an InCore function whose
op has a library definition (:data:`pypto.lib.DEFINITIONS`), it calls the definition with an
emitter and the tensor the result must land in, and splices the returned IR (tile loops over block
ops on ``cast_tensor_to_tile`` views) in place of the call. No op is special-cased here.

Where results land:

* a value the kernel returns gets a new ``Out`` parameter ``out_<k>`` of its type (the caller
  allocates it with ``tensor.create``), as ConvertTensorToBlockOps does;
* any other result (an intermediate read by a later op), and any workspace a definition asks for,
  gets an ``Out`` parameter ``ws_<k>``: it lives in GM until the fusion pass keeps it on chip.

Kernels that also hold a ``tensor.matmul`` are left whole to ConvertTensorToBlockOps (its matmul
lowering replaces the product's variable by a tile, which a library loop could not read).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, ClassVar

from pypto.enums import FunctionType, ParamDirection
from pypto.errors import CompileError, PyptoError
from pypto.ir import expr as E
from pypto.ir import stmt as St
from pypto.ir.types import TensorType, shape_str, static_shape
from pypto.ir.visitor import stmt_list, substitute, walk, walk_stmts
from pypto.lib import DEFINITIONS
from pypto.lib.emit import Emitter
from pypto.lib.registry import live_need
from pypto.lib.tiling import kernel_live
from pypto.passes.base import NameAllocator, Pass
from pypto.passes.convert_tensor_to_block_ops import (
    _without_tensor_aliases,
    allocate_outputs,
    dim_source,
    rebound_output_params,
)
from pypto.passes.ir_utils import all_names


def library_call(e: Any) -> bool:
    return isinstance(e, E.Call) and not isinstance(e.op, E.GlobalVar) and e.op.name in DEFINITIONS


def _has_matmul(func: St.Function) -> bool:
    return any(isinstance(n, E.Call) and not isinstance(n.op, E.GlobalVar) and n.op.name == "tensor.matmul"
               for n in walk(func.body))


class _Expander:
    def __init__(self, func: St.Function):
        self.func = func
        self.names = NameAllocator(all_names(func))
        self.added: list[E.Var] = []
        self.inputs = frozenset(p for p, d in zip(func.params, func.param_directions, strict=False)
                                if d is ParamDirection.In and isinstance(p.type, TensorType))

    def new_param(self, t: TensorType, base: str, span: object) -> E.Var:
        if static_shape(t) is None:
            for d in t.shape:
                if E.static_int(d) is None and dim_source(self.func, d) is None:
                    raise CompileError(f"a tensor-level result of shape {shape_str(t.shape)}: its dim {d} is not a "
                                       "dim of a tensor parameter, so the caller cannot allocate it", span)
        v = E.Var(self.names.fresh(base), t, self.func.span)
        self.added.append(v)
        return v

    def expand(self) -> St.Function:
        top = set(stmt_list(self.func.body))
        stmts = _without_tensor_aliases(list(stmt_list(self.func.body)))
        for s in walk_stmts(self.func.body):
            if s not in top and isinstance(s, St.AssignStmt) and library_call(s.value):
                raise CompileError(
                    f"tensor-level op {s.value.op.name} inside a loop or if of the InCore function "
                    f"'{self.func.name}' is not tiled; write that part with tile ops (pl.load/pl.store) or move "
                    "it out of the loop", s.span)
        rets = [s for s in stmts if isinstance(s, St.ReturnStmt)]
        returned = {v for v in (rets[-1].value if rets else ()) if isinstance(v, E.Var)}
        final = rebound_output_params(self.func, [v for v in (rets[-1].value if rets else ()) if isinstance(v, E.Var)])
        live = max((live_need(s.value) for s in stmts if isinstance(s, St.AssignStmt) and library_call(s.value)),
                   default=0)
        with kernel_live(live):
            body = self._expand_stmts(stmts, returned, final)
        params = tuple(self.func.params) + tuple(self.added)
        dirs = tuple(self.func.param_directions) + (ParamDirection.Out,) * len(self.added)
        span = getattr(self.func.body, "span", E.UNKNOWN_SPAN)
        return replace(self.func, params=params, param_directions=dirs, body=St.SeqStmts(tuple(body), span))

    def _expand_stmts(self, stmts: list, returned: set, final: dict) -> list:
        """``stmts`` with each library call replaced by its definition's IR."""
        mapping: dict = {}
        body: list = []
        for o in stmts:
            s = substitute(o, mapping) if mapping else o
            if not (isinstance(s, St.AssignStmt) and library_call(s.value)):
                body.append(s)
                continue
            base = "out" if o.var in returned else "ws"
            dest = final.get(o.var) or self.new_param(s.var.type, f"{base}_{len(self.added)}", s.span)
            em = Emitter(self.names, s.span, lambda t, b, sp=s.span: self.new_param(t, f"ws_{len(self.added)}_{b}", sp),
                         self.inputs)
            try:
                result = DEFINITIONS[s.value.op.name](em, s.value, dest)
            except PyptoError as e:  # a definition's error without a location is at the op's line
                if e.span is None or not e.span.is_known():
                    e.span = s.span
                raise
            body += em.stmts
            mapping[o.var] = result
        return body


@dataclass(frozen=True)
class ExpandLibraryOpsPass(Pass):
    """Replace the library ops of InCore kernels by their definitions (tile loops over views)."""

    name: ClassVar[str] = "expand-library-ops"
    dump_name: ClassVar[str] = "ExpandLibraryOps"

    def run(self, program: St.Program) -> St.Program:
        funcs, added = [], {}
        for f in program.functions_list:
            if (f.type is FunctionType.InCore and any(library_call(n) for n in walk(f.body))
                    and not _has_matmul(f)):
                ex = _Expander(f)
                f = ex.expand()
                if ex.added:
                    added[f.name] = ex.added
            funcs.append(f)
        if added:
            kernels = {f.name: f for f in funcs}
            funcs = [f if f.type is FunctionType.InCore else allocate_outputs(f, added, kernels) for f in funcs]
        return program.with_functions(funcs)
