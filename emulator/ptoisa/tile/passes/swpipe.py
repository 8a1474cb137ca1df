"""Software pipeline (seed 002 §8.5, optional): ping-pong a load/compute/store loop.

A ``scf.for`` with constant bounds, an even trip count and a body of tile ops and index ops only,
whose loads and stores touch different base memrefs (no iteration reads what another wrote), is
unrolled by two: the second copy runs iteration ``iv + step`` under fresh names, and the two copies
are interleaved stage by stage (index ops, loads, compute, stores), so each stage of one copy can
overlap the other's and the two copies' tiles are live at once: bufferization gives them distinct
buffers (ping and pong). Events of the body are recomputed for the new schedule. Loops that do not
qualify are left alone with a note saying why."""

from __future__ import annotations

import copy

from ptoisa.text import ast as A
from ptoisa.tile.passes.common import Names, PassContext, blocks, is_tile_op
from ptoisa.tile.passes.events import insert_block_events, memory_base, strip_events

_INDEX = A.ScalarType("index")


class SoftwarePipeline:
    name = "software-pipeline"

    def apply(self, module: A.Module, ctx: PassContext) -> None:
        for fn in module.functions:
            names = Names(fn)
            consts = {op.results[0]: op.attrs["value"] for region in blocks(fn) for op in region.ops
                      if op.name == "pto.constant" and isinstance(op.attrs.get("value"), int)}
            for region in list(blocks(fn)):
                out: list[A.Op] = []
                for op in region.ops:
                    if op.name == "scf.for":
                        why = _pipeline(op, consts, names, ctx, out)
                        if why:
                            ctx.notes.append(f"{op.loc}: loop not software-pipelined: {why}")
                    out.append(op)
                region.ops = out


def _pipeline(loop: A.Op, consts: dict, names: Names, ctx: PassContext, before: list[A.Op]) -> str | None:
    lb, ub, step = (consts.get(v) for v in loop.operands[:3])
    if not all(isinstance(x, int) for x in (lb, ub, step)) or len(loop.operands) != 3:
        return "bounds are not constants or the loop carries values"
    trips = max(0, -(-(ub - lb) // step))  # type: ignore[operator]
    if trips < 2 or trips % 2:
        return f"trip count {trips} is not even"
    body = loop.regions[0]
    ops = [op for op in body.ops if op.name != "scf.yield"]
    if any(op.regions for op in ops):
        return "the body has nested regions"
    stored = {memory_base(op) for op in ops if op.name == "pto.tile.store"}
    loaded = {memory_base(op) for op in ops if op.name == "pto.tile.load"}
    if stored & loaded:
        return "the body loads from a memref it stores to"
    strip_events(ops)  # events are recomputed for the new schedule
    iv = body.args[0]
    iv2 = names.fresh("iv")
    step2 = names.fresh("step")
    rename = {iv: iv2}
    second = []
    for op in ops:
        new = copy.deepcopy(op)
        new.results = [_fresh(r, names, rename) for r in op.results]
        new.operands = [rename.get(v, v) if isinstance(v, str) else v for v in op.operands]
        new.groups = {k: [rename.get(v, v) if isinstance(v, str) else v for v in g] for k, g in op.groups.items()}
        second.append(new)
    before.append(A.Op("pto.constant", loop.loc, results=[step2], result_types=[_INDEX], attrs={"value": 2 * step}))
    header = [
        A.Op("pto.addi", loop.loc, results=[iv2], result_types=[_INDEX], operands=[iv, str(loop.operands[2])],
             operand_types=[_INDEX, _INDEX]),
    ]
    stage = {id(op): _stage(op) for op in ops + second}
    merged = sorted(ops + second, key=lambda op: stage[id(op)])  # stable: copy 1 before copy 2 per stage
    tail = [op for op in body.ops if op.name == "scf.yield"]
    body.ops = header + merged + tail
    loop.operands[2] = step2
    insert_block_events(body.ops, ctx, names)
    return None


def _fresh(name: str, names: Names, rename: dict[str, str]) -> str:
    new = names.fresh(name.lstrip("%").rstrip("0123456789") + "_b")
    rename[name] = new
    return new


def _stage(op: A.Op) -> int:
    if not is_tile_op(op):
        return 0
    if op.name == "pto.tile.load":
        return 1
    if op.name == "pto.tile.store":
        return 3
    return 2
