"""Canonicalize (seed 002 §8.1): fold index arithmetic on constants, then remove dead ops.

An op is dead when it has results and none is used (stores and region ops are kept: they have
effects). Folding follows the index ops' integer semantics (``divi`` rounds toward zero like
``arith.divsi``)."""

from __future__ import annotations

from ptoisa.text import ast as A
from ptoisa.tile.passes.common import PassContext, all_uses, blocks, walk

_FOLD = {
    "pto.addi": lambda a, b: a + b, "pto.subi": lambda a, b: a - b, "pto.muli": lambda a, b: a * b,
    "pto.divi": lambda a, b: None if b == 0 else int(a / b), "pto.remi": lambda a, b: None if b == 0 else a - b * int(a / b),
    "pto.mini": min, "pto.maxi": max,
}


class Canonicalize:
    name = "canonicalize"

    def apply(self, module: A.Module, ctx: PassContext) -> None:
        for fn in module.functions:
            fold_constants(fn)
            remove_dead(fn)


def fold_constants(fn: A.Function) -> None:
    consts: dict[str, int] = {}
    for op in walk(fn.body.ops):
        value = op.attrs.get("value")
        if op.name == "pto.constant" and isinstance(value, int) and not isinstance(value, bool):
            consts[op.results[0]] = value
        elif op.name in _FOLD and all(isinstance(v, str) and v in consts for v in op.operands):
            folded = _FOLD[op.name](*(consts[str(v)] for v in op.operands))
            if folded is not None:
                op.name = "pto.constant"
                op.operands, op.operand_types = [], []
                op.attrs = {"value": folded}
                consts[op.results[0]] = folded


def remove_dead(fn: A.Function) -> None:
    changed = True
    while changed:
        used: set[str] = set()
        for op in fn.body.ops:
            used.update(all_uses(op))
        changed = False
        for region in blocks(fn):
            keep = []
            for op in region.ops:
                dead = op.results and not op.regions and op.name != "pto.tile.store" and not (set(op.results) & used)
                if dead:
                    changed = True
                else:
                    keep.append(op)
            region.ops = keep
