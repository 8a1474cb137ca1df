"""Canonicalize memref views (seed 002 §8.2): every load/store addresses its base memref.

``pto.memref.subview %m[%o0, %o1] [32, 32] [1, 1]`` followed by ``pto.tile.load %sv[%i, %j]``
becomes ``pto.tile.load %m[%o0 + %i, %o1 + %j]`` (base + offset, the base's strides), with the sums
as ``pto.addi`` (folded when both are constants). Views of views compose. The subviews are left for
dead-code removal."""

from __future__ import annotations

from ptoisa.errors import VerifyError
from ptoisa.text import ast as A
from ptoisa.tile.passes.canonicalize import remove_dead
from ptoisa.tile.passes.common import Names, PassContext, blocks

_INDEX = A.ScalarType("index")


class CanonicalizeViews:
    name = "canonicalize-views"

    def apply(self, module: A.Module, ctx: PassContext) -> None:
        for fn in module.functions:
            _rewrite(fn)
            remove_dead(fn)


def _rewrite(fn: A.Function) -> None:
    names = Names(fn)
    arg_types = dict(zip(fn.args, fn.arg_types, strict=False))
    views: dict[str, tuple[str, A.Type, list[A.Operand]]] = {}  # view -> (base, base type, offsets)
    consts: dict[str, int] = {}
    for region in list(blocks(fn)):
        out: list[A.Op] = []
        for op in region.ops:
            if op.name == "pto.constant" and isinstance(op.attrs.get("value"), int):
                consts[op.results[0]] = op.attrs["value"]  # type: ignore[assignment]
            if op.name == "pto.memref.subview":
                if any(s != 1 for s in op.groups["strides"]):
                    raise VerifyError(f"error: '{op.name}' op non-unit subview strides are not supported "
                                      "by the lowering", op.loc)
                src = str(op.operands[0])
                base, base_t, offs = views.get(src, (src, arg_types.get(src, op.operand_types[0]), None))
                offsets = list(op.groups["offsets"])
                if offs is not None:
                    offsets = [_add(a, b, op, out, names, consts) for a, b in zip(offs, offsets, strict=False)]
                views[op.results[0]] = (base, base_t, offsets)
            elif op.name in ("pto.tile.load", "pto.tile.store"):
                pos = 0 if op.name == "pto.tile.load" else 1
                mem = str(op.operands[pos])
                if mem in views:
                    base, base_t, offs = views[mem]
                    op.groups["indices"] = [_add(a, b, op, out, names, consts)
                                            for a, b in zip(offs, op.groups["indices"], strict=False)]
                    op.operands[pos] = base
                    op.operand_types[pos] = base_t
            out.append(op)
        region.ops = out


def _add(a: A.Operand, b: A.Operand, at: A.Op, out: list[A.Op], names: Names, consts: dict[str, int]) -> A.Operand:
    va = consts.get(a) if isinstance(a, str) else a
    vb = consts.get(b) if isinstance(b, str) else b
    if vb == 0:
        return a
    if va == 0:
        return b
    res = names.fresh("idx")
    if isinstance(va, int) and isinstance(vb, int):
        out.append(A.Op("pto.constant", at.loc, results=[res], result_types=[_INDEX], attrs={"value": va + vb}))
        consts[res] = va + vb
        return res
    operands = []
    for v in (a, b):
        if isinstance(v, int):
            c = names.fresh("c")
            out.append(A.Op("pto.constant", at.loc, results=[c], result_types=[_INDEX], attrs={"value": v}))
            consts[c] = v
            v = c
        operands.append(v)
    out.append(A.Op("pto.addi", at.loc, results=[res], result_types=[_INDEX], operands=operands,
                    operand_types=[_INDEX, _INDEX]))
    return res
