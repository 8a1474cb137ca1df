"""MaterializeTileViews: once a kernel's boundary is known, the view casts become data movement.

In an InCore function (seed 003 §2: TLOAD/TSTORE appear only once incore boundaries are set):

* ``t = cast_tensor_to_tile(x, offsets, sizes, valid; pad)`` reads GM tensor ``x``: it becomes
  ``t = block.load(x, offsets, sizes, valid)`` (TLOAD), followed when the window is a tail with a
  pad request by ``block.fillpad`` (the consumer's identity outside the valid region);
* ``y = tensor.assemble(target, v, offsets)`` of ``v = cast_tile_to_tensor(t)`` writes the tile into
  GM: it becomes ``y = block.store(t, offsets, target)`` (TSTORE), and the view itself disappears;
* ``cast_tensor_to_tile`` of a ``cast_tile_to_tensor`` view is the tile itself (what fusion leaves
  when a consumer reads its producer's tile).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, ClassVar

from pypto.enums import FunctionType, MemorySpace, TilePad
from pypto.errors import CompileError
from pypto.ir import expr as E
from pypto.ir import stmt as St
from pypto.ir.expr import static_int
from pypto.ops import block as B
from pypto.passes.base import NameAllocator, Pass
from pypto.passes.block_rewriter import BlockRewriter
from pypto.passes.ir_utils import all_names

CAST_IN, CAST_OUT = "block.cast_tensor_to_tile", "tensor.cast_tile_to_tensor"


def _op(e: Any) -> str | None:
    return e.op.name if isinstance(e, E.Call) and not isinstance(e.op, E.GlobalVar) else None


class _Materializer(BlockRewriter):
    def __init__(self, func: St.Function):
        self.names = NameAllocator(all_names(func))
        self.views: dict = {}  # cast_tile_to_tensor result -> its tile
        self.pending: dict = {}  # a load of a producer's tile view -> that tile

    def stmt(self, s: Any) -> list:
        if isinstance(s, (St.ForStmt, St.WhileStmt, St.ScopeStmt, St.IfStmt)):
            return [self.descend(s)]
        if not isinstance(s, St.AssignStmt):
            return [s]
        name, v = _op(s.value), s.value
        if name == CAST_OUT:
            self.views[s.var] = v.args[0]
            return []
        if name == CAST_IN:
            return self.load(s)
        if name == "tensor.assemble" and v.args[1] in self.views:
            tile = self.views[v.args[1]]
            return [St.AssignStmt(s.var, B.store(tile, v.args[2], v.args[0], span=v.span), s.span)]
        for n in (v.args if isinstance(v, E.Call) else ()):
            if n in self.views:
                raise CompileError(f"the tile view '{n.name}' is used by {name}, which has no lowering", s.span)
        return [s]

    def load(self, s: St.AssignStmt) -> list:
        x, offs, sizes, valid = s.value.args
        if x in self.views:  # a producer's tile read back by its consumer: no data moves
            self.pending[s.var] = self.views[x]
            return []
        pad = TilePad(s.value.kwargs.get("pad", int(TilePad.null)))
        tail = any(static_int(a) != static_int(b) for a, b in zip(valid.elements, sizes.elements, strict=False))
        load = B.load(x, offs, sizes, valid, MemorySpace.Vec, span=s.value.span)
        if pad is TilePad.null or not tail:
            return [St.AssignStmt(s.var, load, s.span)]
        raw = E.Var(self.names.fresh(f"{s.var.name}_raw"), load.type, s.span)
        return [St.AssignStmt(raw, load, s.span),
                St.AssignStmt(s.var, B.fillpad(raw, pad, span=s.value.span), s.span)]


@dataclass(frozen=True)
class MaterializeTileViewsPass(Pass):
    """Turn the view casts of InCore kernels into TLOAD / TSTORE."""

    name: ClassVar[str] = "materialize-tile-views"
    dump_name: ClassVar[str] = "MaterializeTileViews"

    def run_function(self, func: St.Function) -> St.Function:
        if func.type is not FunctionType.InCore:
            return func
        return replace(func, body=_Materializer(func).block(func.body))
