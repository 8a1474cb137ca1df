"""The pass pipeline of seed 002 §8, from a parsed tile-level module to a level-2 module.

verify -> canonicalize -> canonicalize-views -> infer-tile-info (+ target legality) ->
insert-events -> [software-pipeline] -> bufferize -> lower. The IR-level verifier runs after every
pass (a pass that breaks the IR is caught where it happened); ``dump_dir`` receives the module after
each pass as ``NN-<pass>.pto`` (the last one is the level-2 result).
"""

from __future__ import annotations

import os
from collections.abc import Callable

from ptoisa.isa.spec import ISA
from ptoisa.machine import Machine
from ptoisa.text import ast as A
from ptoisa.text.printer import print_module
from ptoisa.text.tile_syntax import is_tile_level_op
from ptoisa.tile.lower import lower_module
from ptoisa.tile.passes.bufferize import Bufferize
from ptoisa.tile.passes.canonicalize import Canonicalize
from ptoisa.tile.passes.common import PassContext, walk
from ptoisa.tile.passes.events import InsertEvents
from ptoisa.tile.passes.swpipe import SoftwarePipeline
from ptoisa.tile.passes.tile_info import InferTileInfo
from ptoisa.tile.passes.views import CanonicalizeViews
from ptoisa.tile.verify import check_target, verify


def is_tile_level(module: A.Module) -> bool:
    """Written in the tile-level form: it has a tile-level op or a ``pto.memref`` argument."""
    for fn in module.functions:
        if any(isinstance(t, A.TileMemRefType) for t in fn.arg_types):
            return True
        if any(is_tile_level_op(op.name) for op in walk(fn.body.ops)):
            return True
    return False


def passes(software_pipeline: bool = False) -> list:
    out = [Canonicalize(), CanonicalizeViews(), InferTileInfo(), InsertEvents()]
    if software_pipeline:
        out.append(SoftwarePipeline())
    out.append(Bufferize())
    return out


def lower_tile_module(module: A.Module, isa: ISA, machine: Machine, dump_dir: str | os.PathLike | None = None,
                      software_pipeline: bool = False, notes: list[str] | None = None) -> A.Module:
    """Verify ``module``, run the pipeline on it (in place) and return the level-2 module."""
    ctx = PassContext(isa, machine)
    dump = _dumper(dump_dir)
    verify(module, isa)
    dump("input", module)
    for p in passes(software_pipeline):
        p.apply(module, ctx)
        verify(module, isa)
        if p.name == "infer-tile-info":
            check_target(module, isa, machine)
        dump(p.name, module)
    lowered = lower_module(module, ctx)
    dump("lower", lowered)
    if notes is not None:
        notes.extend(ctx.notes)
    return lowered


def _dumper(dump_dir: str | os.PathLike | None) -> Callable[[str, A.Module], None]:
    if dump_dir is None:
        return lambda name, module: None
    os.makedirs(dump_dir, exist_ok=True)
    count = [0]

    def dump(name: str, module: A.Module) -> None:
        path = os.path.join(dump_dir, f"{count[0]:02d}-{name}.pto")
        count[0] += 1
        with open(path, "w") as f:
            f.write(print_module(module))
    return dump
