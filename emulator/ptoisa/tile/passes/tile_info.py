"""Infer tile info (seed 002 §8.3): give every tile a loc, a layout and a valid region.

A tile's loc is what its type or ``{loc}`` says; else what its producer fixes (matmul -> Acc, mov ->
its destination, vector ops -> Vec); else, for loads and extracts, what its users need (a load
feeding ``mov.m2*``/``extract`` lands in Mat; an extract feeding matmul's left/right/bias operand
is Left/Right/Bias). The layout defaults per loc (Vec ND (DN for an Rx1 column), Mat Nz, Left Zz, Right Zn, Acc Nz,
Bias ND, Scale Zz: the A2/A3 fractal layouts of pto-text-format.md §5.3). An omitted valid region
is what the operands' valid regions give (an elementwise, scalar, cvt or mov result keeps its first
tile operand's, a matmul's is M of the left x N of the right, a row reduction's is the source's rows
x 1, an expand's is its full-shape operand's), else the full shape: a load's tail stays a tail
through the ops that consume it, as level 2 requires (elementwise ops over equal valid regions) and
so that the store writes only the tail's rows."""

from __future__ import annotations

from dataclasses import replace

from ptoisa.text import ast as A
from ptoisa.tile.ops import TileOpDef
from ptoisa.tile.passes.common import PassContext, is_tile_op, op_def, result_tile, walk

DEFAULT_LAYOUT = {"Vec": "ND", "Mat": "Nz", "Left": "Zz", "Right": "Zn", "Acc": "Nz", "Bias": "ND", "Scale": "Zz"}
_MATMUL_ROLE = {"matmul": ("Left", "Right"), "matmul_acc": ("Acc", "Left", "Right"),
                "matmul_bias": ("Left", "Right", "Bias")}


class InferTileInfo:
    name = "infer-tile-info"

    def apply(self, module: A.Module, ctx: PassContext) -> None:
        for fn in module.functions:
            _infer(fn, ctx)


def _infer(fn: A.Function, ctx: PassContext) -> None:
    ops = [op for op in walk(fn.body.ops) if is_tile_op(op)]
    wanted: dict[str, str] = {}  # tile -> loc its users need
    for op in ops:
        d = op_def(op, ctx.isa)
        for i, v in enumerate(op.operands):
            need = _operand_loc(d, i)
            if need is not None and isinstance(v, str):
                wanted.setdefault(v, need)
    info: dict[str, A.TileType] = {}
    valid: dict[str, list] = {}  # tile -> its valid region (ints or index SSA names)
    _visit(fn.body.ops, ctx, wanted, info, valid)
    for op in walk(fn.body.ops):
        op.operand_types = [info.get(str(v), t) if isinstance(t, A.TileType) else t
                            for v, t in zip(op.operands, op.operand_types, strict=False)]
        for r in op.regions:
            r.arg_types = [info.get(a, t) if isinstance(t, A.TileType) else t
                           for a, t in zip(r.args, r.arg_types, strict=False)]


def _visit(ops: list[A.Op], ctx: PassContext, wanted: dict[str, str], info: dict[str, A.TileType],
           valid: dict[str, list]) -> None:
    for op in ops:
        if op.name == "scf.for":
            body = op.regions[0]
            for k, (init, ty) in enumerate(zip(op.operands[3:], op.result_types, strict=False)):
                if isinstance(ty, A.TileType):
                    full = info.get(str(init)) or _complete(ty, wanted.get(str(init)))
                    info[body.args[k + 1]] = info[op.results[k]] = full
                    op.result_types[k] = full
            _visit(body.ops, ctx, wanted, info, valid)
        elif op.name == "scf.if":
            for region in op.regions:
                _visit(region.ops, ctx, wanted, info, valid)
            then_yield = op.regions[0].ops[-1].operands if op.regions and op.regions[0].ops else []
            for k, ty in enumerate(op.result_types):
                if isinstance(ty, A.TileType):
                    src = str(then_yield[k]) if k < len(then_yield) else ""
                    full = info.get(src) or _complete(ty, None)
                    info[op.results[k]] = full
                    op.result_types[k] = full
        elif is_tile_op(op):
            _tile(op, ctx, wanted, info, valid)


def _complete(t: A.TileType, loc: str | None) -> A.TileType:
    loc = t.loc or loc or "Vec"
    return replace(t, loc=loc, layout=t.layout or _default_layout(loc, t))


def _tile(op: A.Op, ctx: PassContext, wanted: dict[str, str], info: dict[str, A.TileType],
          valid: dict[str, list]) -> None:
    d = op_def(op, ctx.isa)
    res = result_tile(op)
    if res is None:
        return
    name = op.results[0]
    loc = res.loc or _attr(op, "loc") or _producer_loc(d) or wanted.get(name) or "Vec"
    if d.rule == "extract" and res.loc is None and wanted.get(name):
        loc = wanted[name]
    layout = res.layout or _attr(op, "layout") or _default_layout(loc, res)
    full = replace(res, loc=loc, layout=layout)
    info[name] = full
    op.attrs.pop("loc", None)
    op.attrs.pop("layout", None)
    op.result_types = [full if isinstance(t, A.TileType) else t for t in op.result_types]
    if "valid" not in op.groups:
        inherited = _inherited_valid(op, d, full, valid)
        if inherited is not None:
            op.groups["valid"] = inherited
        elif None not in full.shape:
            op.groups["valid"] = list(full.shape)  # type: ignore[arg-type]
    if "valid" in op.groups:
        valid[name] = list(op.groups["valid"])


def _inherited_valid(op: A.Op, d: TileOpDef, res: A.TileType, valid: dict[str, list]) -> list | None:
    """The valid region the result of ``op`` gets from its tile operands' (None: none known, the
    full shape). Loads and extracts define their own (the full shape unless written)."""
    tiles = [str(v) for v in op.operands[:d.tiles]]
    known = [valid.get(t) for t in tiles]
    if d.rule in ("same", "scalar", "cvt", "mov"):
        return known[0] if known and known[0] is not None else None
    if d.rule in ("matmul", "matmul_bias", "matmul_acc"):
        left, right = (known[1], known[2]) if d.rule == "matmul_acc" else (known[0], known[1])
        if left is None and right is None:
            return None
        rows = left[0] if left is not None else res.shape[0]
        cols = right[1] if right is not None else res.shape[1]
        return [rows, cols]
    if d.rule == "row_reduce" and known and known[0] is not None:
        return [known[0][0], 1]
    if d.rule == "col_reduce" and known and known[0] is not None:
        return [1, known[0][1]]
    if d.rule in ("row_expand", "col_expand"):
        types = op.operand_types[:d.tiles]
        for v, t in zip(known, types, strict=False):
            if v is not None and isinstance(t, A.TileType) and list(t.shape) == list(res.shape):
                return v
    return None


def _default_layout(loc: str, t: A.TileType) -> str:
    """Per loc; a column vector (Rx1) in Vec is DN, as level-2 writes it (a row of one element is
    not a whole UB block)."""
    if loc == "Vec" and len(t.shape) == 2 and t.shape[1] == 1 and t.shape[0] != 1:
        return "DN"
    return DEFAULT_LAYOUT[loc]


def _attr(op: A.Op, key: str) -> str | None:
    value = op.attrs.get(key)
    return value.value if isinstance(value, A.EnumAttr) else None


def _producer_loc(d: TileOpDef) -> str | None:
    if d.rule == "mov":
        return d.dst_loc
    if d.rule.startswith("matmul"):
        return "Acc"
    if d.rule in ("load", "extract"):
        return None
    return "Vec"


def _operand_loc(d: TileOpDef, i: int) -> str | None:
    if d.rule == "mov":
        return d.src_loc if i == 0 else None
    if d.rule == "extract":
        return "Mat" if i == 0 else None
    roles = _MATMUL_ROLE.get(d.rule)
    if roles is not None:
        return roles[i] if i < len(roles) else None
    if d.rule in ("load", "store"):
        return None
    return "Vec"
