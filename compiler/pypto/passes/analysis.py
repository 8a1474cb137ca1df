"""Facts shared by the memory and sync passes: variable collection, retyping, pipes, buffer effects."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from pypto.enums import MemorySpace, PipeType
from pypto.ir import expr as E
from pypto.ir import stmt as St
from pypto.ir.types import MemRef, TensorType, TileType
from pypto.ir.visitor import substitute, walk_stmts

MATMUL_OPS = {
    "block.matmul", "block.matmul_acc", "block.matmul_bias", "block.gemv", "block.gemv_acc", "block.gemv_bias",
}
NO_INSTRUCTION = {"block.create_tile", "block.get_block_idx", "tensor.dim", "block.reshape"}
# Argument position of the scratch tile an op overwrites (user-given or appended by the compiler).
SCRATCH_ARG = {"block.row_sum": 1, "block.row_max": 1, "block.row_min": 1, "block.xor": 2, "block.xors": 2,
               "block.prelu": 2, "block.sel": 3, "block.sels": 3, "block.rem": 2, "block.rems": 2,
               "block.transpose": 3}


def space_of_def(value: Any) -> MemorySpace | None:
    """The memory a tile op's result lives in (None for non-tile values)."""
    if not isinstance(value, E.Call) or isinstance(value.op, E.GlobalVar):
        return None
    name = value.op.name
    if name in ("block.load", "block.move", "block.create_tile"):
        return value.kwargs.get("target_memory", MemorySpace.Vec)
    if name in MATMUL_OPS:
        return MemorySpace.Acc
    if name.startswith("block."):
        return MemorySpace.Vec
    return None


def defined_vars(func: St.Function) -> list[E.Var]:
    """Params and every definition (assign vars, loop vars, iter args, return vars) in program order."""
    out: list = list(func.params)
    for s in walk_stmts(func.body):
        if isinstance(s, St.AssignStmt):
            out.append(s.var)
        elif isinstance(s, St.ForStmt):
            out.append(s.loop_var)
            out.extend(s.iter_args)
            out.extend(s.return_vars)
        elif isinstance(s, St.WhileStmt):
            out.extend(s.iter_args)
            out.extend(s.return_vars)
        elif isinstance(s, St.IfStmt):
            out.extend(s.return_vars)
    return out


def retype(func: St.Function, new_type: Callable[[E.Var], Any]) -> St.Function:
    """Rebuild every variable whose ``new_type(var)`` differs from its type; substitute everywhere."""
    mapping: dict = {}
    for v in defined_vars(func):
        t = new_type(v)
        if t is v.type and not isinstance(v, E.IterArg):
            continue
        if isinstance(v, E.IterArg):
            init = substitute(v.init_value, mapping)
            if t is v.type and init is v.init_value:
                continue
            mapping[v] = E.IterArg(v.name, t, v.span, init)
        else:
            mapping[v] = E.Var(v.name, t, v.span)
    if not mapping:
        return func
    new = substitute(func, mapping)
    return replace(new, params=tuple(mapping.get(p, p) for p in func.params))


def memref_of(e: Any) -> MemRef | None:
    return getattr(getattr(e, "type", None), "memref", None)


def space_of(e: Any) -> MemorySpace | None:
    m = memref_of(e)
    return m.memory_space if m is not None else None


def op_call(s: Any) -> E.Call | None:
    v = s.value if isinstance(s, St.AssignStmt) else s.expr if isinstance(s, St.EvalStmt) else None
    if isinstance(v, E.Call) and not isinstance(v.op, E.GlobalVar):
        return v
    return None


def pipe_of(call: E.Call, result: Any = None) -> PipeType:
    """Pipe assignment (spec §6.4)."""
    name = call.op.name
    if name == "block.load":
        return PipeType.MTE2
    if name == "block.store":
        return PipeType.FIX if space_of(call.args[0]) is MemorySpace.Acc else PipeType.MTE3
    if name == "block.move":
        src, dst = space_of(call.args[0]), call.kwargs.get("target_memory")
        if src is MemorySpace.Vec and dst is MemorySpace.Vec:
            return PipeType.V
        if src is MemorySpace.Acc:
            return PipeType.FIX
        return PipeType.MTE1
    if name in MATMUL_OPS:
        return PipeType.M
    if name in NO_INSTRUCTION or not name.startswith("block."):
        return PipeType.S
    tiles = [a for a in call.args if isinstance(getattr(a, "type", None), TileType)]
    if result is not None and isinstance(getattr(result, "type", None), TileType):
        tiles.append(result)
    if tiles and any(space_of(t) is MemorySpace.Vec for t in tiles):
        return PipeType.V
    return PipeType.S


def effects(s: Any) -> tuple[list[MemRef], list[MemRef]]:
    """(read buffers, written buffers) of an op statement."""
    call = op_call(s)
    if call is None:
        return [], []
    result = s.var if isinstance(s, St.AssignStmt) else None
    name = call.op.name
    reads, writes = [], []
    if name == "block.store":
        reads.append(memref_of(call.args[0]))
        writes.append(memref_of(call.args[2]))
    else:
        for i, a in enumerate(call.args):
            if isinstance(getattr(a, "type", None), (TileType, TensorType)):
                (writes if SCRATCH_ARG.get(name) == i else reads).append(memref_of(a))
        if result is not None and isinstance(result.type, (TileType, TensorType)):
            writes.append(memref_of(result))
    return [m for m in reads if m is not None], [m for m in writes if m is not None]
