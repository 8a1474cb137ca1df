"""Facts shared by the memory and sync passes: variable collection, retyping, pipes, buffer effects."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from pypto.enums import MemorySpace, PipeType
from pypto.errors import CompileError
from pypto.ir import expr as E
from pypto.ir import stmt as St
from pypto.ir.types import MemRef, TensorType, TileType
from pypto.ir.visitor import substitute, walk_stmts
from pypto.ops import isa


def space_of_def(value: Any) -> MemorySpace | None:
    """The memory a tile op's result lives in (None for non-tile values)."""
    if not isinstance(value, E.Call) or isinstance(value.op, E.GlobalVar):
        return None
    name = value.op.name
    if name in ("block.load", "block.move", "block.create_tile"):
        return value.kwargs.get("target_memory", MemorySpace.Vec)
    if name in ("block.transpose_view", "block.setval", "block.set_validshape", "block.fillpad_inplace"):
        return None  # the argument's buffer, wherever it lives
    if name.startswith("block."):
        return isa.result_space(name) or MemorySpace.Vec
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


def popped_memrefs(func: St.Function) -> set:
    """The buffers of tiles popped from a cube <-> vector FIFO (they alias the FIFO's slots)."""
    return {memref_of(s.var) for s in walk_stmts(func.body)
            if isinstance(s, St.AssignStmt) and isinstance(s.value, E.Call) and not isinstance(s.value.op, E.GlobalVar)
            and s.value.op.name.startswith("block.tpop_")} - {None}


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
    """The pipe that runs ``call`` (spec §6.4): the pipe rule of the instruction it lowers to, keyed by
    the memory of its first tile or tensor input and of its result (``result`` or, for a move, its
    target memory)."""
    name = call.op.name
    src = next((space_of(a) for a in call.args if isinstance(getattr(a, "type", None), (TileType, TensorType))),
               None)
    dst = call.kwargs.get("target_memory") if name == "block.move" else space_of(result)
    if name == "block.store":
        dst = MemorySpace.DDR
    try:
        return isa.pipe(name, src, dst)
    except ValueError as e:
        raise CompileError(f"{name.split('.', 1)[1]}: {e}", call.span) from None


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
                (writes if isa.scratch_arg(name) == i else reads).append(memref_of(a))
        if result is not None and isinstance(result.type, (TileType, TensorType)):
            writes.append(memref_of(result))
    return [m for m in reads if m is not None], [m for m in writes if m is not None]
