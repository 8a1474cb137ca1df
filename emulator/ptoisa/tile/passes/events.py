"""Insert events (seed 002 §8.4): the sequential form becomes the async form with the fewest tokens.

Within each block, op C depends on op P when C reads a tile P produced, or both access the same
base memref and one of them stores (GM RAW/WAR/WAW). C then needs P complete before it starts,
unless that is already implied: by a token C waits on whose producer (transitively) waited on P, by
an earlier wait of C's pipe (a wait blocks the pipe, so later ops of the pipe start after it), by a
barrier of C's pipe, or by C's pipe completing in order (the previous op on an in-order pipe is
complete, with everything it knew), or by a full barrier (the lowering fences loops and ifs).
The remaining dependencies become ``wait(...)`` entries and each waited producer gets an
``!pto.event<producer = #pto.op<OPCODE>>`` result. Dependencies across a loop boundary are not
tokens: the lowering fences loops with a full barrier. A function that already has tokens is kept
as written (it is already async)."""

from __future__ import annotations

from ptoisa.text import ast as A
from ptoisa.tile.ops import producer_opcode
from ptoisa.tile.passes.common import (
    Names,
    PassContext,
    blocks,
    event_result,
    is_tile_op,
    op_def,
    pipe_of,
    walk,
)


class InsertEvents:
    name = "insert-events"

    def apply(self, module: A.Module, ctx: PassContext) -> None:
        for fn in module.functions:
            if any(event_result(op) or op.groups.get("wait") for op in walk(fn.body.ops)):
                continue
            names = Names(fn)
            for region in blocks(fn):
                insert_block_events(region.ops, ctx, names)
            ctx.derived_events.add(fn.name)


def memory_base(op: A.Op) -> str | None:
    if op.name == "pto.tile.load":
        return str(op.operands[0])
    if op.name == "pto.tile.store":
        return str(op.operands[1])
    return None


def dependencies(ops: list[A.Op], extra: dict[int, list[A.Op]] | None = None) -> dict[int, set[int]]:
    """For each tile op index in ``ops``: the indices of the earlier tile ops it must follow
    (``extra``: more ops to follow, keyed by ``id(op)``, e.g. from buffer reuse)."""
    index = {id(op): i for i, op in enumerate(ops)}
    producer: dict[str, int] = {}
    deps: dict[int, set[int]] = {}
    mem: dict[str, list[tuple[int, bool]]] = {}
    for i, op in enumerate(ops):
        if not is_tile_op(op):
            continue
        ds = {producer[str(v)] for v in op.operands if str(v) in producer}
        base = memory_base(op)
        if base is not None:
            store = op.name == "pto.tile.store"
            ds.update(j for j, other_store in mem.get(base, []) if store or other_store)
            mem.setdefault(base, []).append((i, store))
        for other in (extra or {}).get(id(op), []):
            j = index.get(id(other))
            if j is not None and j < i:
                ds.add(j)
        deps[i] = ds
        for r in op.results:
            producer[r] = i
    return deps


def strip_events(ops: list[A.Op]) -> None:
    """Remove every event result and wait list of the ops of one block."""
    for op in ops:
        ev = event_result(op)
        if ev is not None:
            i = op.results.index(ev)
            del op.results[i], op.result_types[i]
        op.groups.pop("wait", None)


def insert_block_events(ops: list[A.Op], ctx: PassContext, names: Names,
                        extra: dict[int, list[A.Op]] | None = None) -> None:
    """Give the tile ops of one block their minimal ``wait`` lists and event results."""
    strip_events(ops)
    deps = dependencies(ops, extra)
    pipes = {i: pipe_of(ops[i], ctx) for i in deps}
    known: dict[int, set[int]] = {}  # ops known complete when op i starts (including via waits)
    pipe_known: dict[str, set[int]] = {}  # a wait blocks its pipe: later ops of the pipe know it too
    on_pipe: dict[str, list[int]] = {}
    waits: dict[int, list[int]] = {}
    fences = [j for j, op in enumerate(ops) if any(is_tile_op(o) for o in walk([op])) and op.regions]
    for i in sorted(deps):
        pipe = pipes[i]
        k = set(pipe_known.get(pipe, ()))
        fence = max((f for f in fences if f < i), default=None)
        if fence is not None:  # the lowering fences regions with a full barrier: all before is done
            k |= {j for j in deps if j < fence}
        earlier = on_pipe.setdefault(pipe, [])
        in_order = ctx.machine.in_order.get(pipe, True)
        if earlier and in_order:
            k |= known[earlier[-1]] | {earlier[-1]}
        chosen = []
        for p in sorted(deps[i], reverse=True):
            if p in k:
                continue
            chosen.append(p)
            k |= known[p] | {p}
            if pipes[p] == pipe and not in_order:  # a pipe barrier: every earlier op of the pipe is done
                for j in earlier:
                    k |= known[j] | {j}
        known[i] = k
        pipe_known[pipe] = k
        earlier.append(i)
        waits[i] = sorted(chosen)
    token: dict[int, str] = {}
    for i in sorted(deps):
        for p in waits[i]:
            if p not in token:
                token[p] = add_event_result(ops[p], ctx, names)
        if waits[i]:
            ops[i].groups["wait"] = [token[p] for p in waits[i]]


def add_event_result(op: A.Op, ctx: PassContext, names: Names) -> str:
    """The op's event token, adding an event result if it has none."""
    existing = event_result(op)
    if existing is not None:
        return existing
    d = op_def(op, ctx.isa)
    src = next((t for t in op.operand_types if isinstance(t, A.TileType)), None)
    name = names.fresh("e")
    op.results.append(name)
    op.result_types.append(A.EventType(producer_opcode(d, src.loc if src else None)))
    return name
