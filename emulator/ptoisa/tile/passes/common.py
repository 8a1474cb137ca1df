"""What every tile-level pass needs: walking blocks, fresh SSA names, def/use maps, pipes."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field

from ptoisa.isa.spec import ISA
from ptoisa.machine import Machine
from ptoisa.text import ast as A
from ptoisa.text.tile_syntax import TILE_PREFIX
from ptoisa.tile.ops import LOC_TO_BUF, TileOpDef, tile_op


@dataclass
class PassContext:
    """The records passes consult, and notes they leave for the user (what was skipped and why)."""

    isa: ISA
    machine: Machine
    notes: list[str] = field(default_factory=list)
    # functions whose tokens insert-events derived (later passes may re-derive them)
    derived_events: set[str] = field(default_factory=set)


def walk(ops: list[A.Op]) -> Iterator[A.Op]:
    """Every op in program order, nested regions right after their op."""
    for op in ops:
        yield op
        for r in op.regions:
            yield from walk(r.ops)


def blocks(fn: A.Function) -> Iterator[A.Region]:
    """The function body and every region nested in it."""
    stack = [fn.body]
    while stack:
        region = stack.pop()
        yield region
        for op in region.ops:
            stack.extend(op.regions)


class Names:
    """Fresh SSA names that collide with nothing already in the function."""

    def __init__(self, fn: A.Function):
        self.used = set(fn.args)
        for op in walk(fn.body.ops):
            self.used.update(op.results)
            for r in op.regions:
                self.used.update(r.args)
        self._n = itertools.count()

    def fresh(self, stem: str) -> str:
        while True:
            name = f"%{stem}{next(self._n)}"
            if name not in self.used:
                self.used.add(name)
                return name


def uses(op: A.Op) -> list[str]:
    """SSA names ``op`` reads (operands, index/valid groups and wait lists; not nested regions)."""
    out = [v for v in op.operands if isinstance(v, str)]
    for group in op.groups.values():
        out.extend(v for v in group if isinstance(v, str))
    return out


def all_uses(op: A.Op) -> list[str]:
    """:func:`uses` of ``op`` and of every op nested in it."""
    out = uses(op)
    for inner in walk([r_op for r in op.regions for r_op in r.ops]):
        out.extend(uses(inner))
    return out


def is_tile_op(op: A.Op) -> bool:
    return op.name.startswith(TILE_PREFIX)


def result_tile(op: A.Op) -> A.TileType | None:
    return next((t for t in op.result_types if isinstance(t, A.TileType)), None)


def event_result(op: A.Op) -> str | None:
    for name, ty in zip(op.results, op.result_types, strict=False):
        if isinstance(ty, A.EventType):
            return name
    return None


def op_def(op: A.Op, isa: ISA) -> TileOpDef:
    d = tile_op(op.name, isa)
    assert d is not None, op.name
    return d


def pipe_of(op: A.Op, ctx: PassContext) -> str:
    """The pipe that executes tile op ``op`` (from its ISA record's pipe rule and its tiles' locs)."""
    d = op_def(op, ctx.isa)
    spec = ctx.isa[d.mnemonic]
    tiles = [t for t in op.operand_types if isinstance(t, A.TileType)]
    res = result_tile(op)
    src = LOC_TO_BUF.get(str(tiles[0].loc)) if tiles else None
    dst = LOC_TO_BUF.get(str(res.loc)) if res is not None else None
    if d.rule == "load":
        src = "gm"
    if d.rule == "store":
        dst = "gm"
    return spec.pipe.resolve(src, dst)
