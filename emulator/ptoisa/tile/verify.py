"""Verifier of the tile-level SSA form, layered as seed 002 §7.

:func:`verify` is the IR-level layer: SSA (each value defined once, before its uses, in an
enclosing block), types (a use's written type agrees with the definition's), the rank and shape rule
of every op, ``0 < valid[d] <= shape[d]``, extract bounds, and event tokens used only in the
``wait(...)`` lists of ops that may wait. :func:`check_target` is target legality, asked of the ISA
and machine records: the module's target, 2-D static tiles, element types the instruction accepts,
tile locations its operands accept, layouts a buffer may hold (machine record), box divisibility
(the buffer's fractal size), buffer capacity and row alignment.

Messages follow MLIR: ``file:line:col: error: 'pto.tile.add' op <what is wrong>``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ptoisa.dtypes import is_known, itemsize
from ptoisa.errors import Loc, VerifyError
from ptoisa.isa.spec import ISA
from ptoisa.machine import Machine
from ptoisa.text import ast as A
from ptoisa.text.tile_syntax import INDEX_OPS, SUBVIEW, TILE_PREFIX, canonical_layout
from ptoisa.tile.ops import LAYOUT_TO_BUF, LOC_TO_BUF, TileOpDef, producer_opcode, tile_op

_INDEX = A.ScalarType("index")
A2A3_TARGETS = ("a2", "a3", "a2a3")


def error(op_or_loc: A.Op | Loc | None, message: str) -> VerifyError:
    if isinstance(op_or_loc, A.Op):
        return VerifyError(f"error: '{op_or_loc.name}' op {message}", op_or_loc.loc)
    return VerifyError(f"error: {message}", op_or_loc)


@dataclass
class _Scope:
    types: dict[str, A.Type] = field(default_factory=dict)
    consts: dict[str, int | float] = field(default_factory=dict)
    valid: dict[str, list] = field(default_factory=dict)  # tile -> its static valid sizes (None = dynamic)


def verify(module: A.Module, isa: ISA) -> None:
    """IR-level checks of every function; raises :class:`VerifyError` at the first problem."""
    for fn in module.functions:
        scope = _Scope()
        for name, ty in zip(fn.args, fn.arg_types, strict=False):
            if isinstance(ty, A.EventType):
                raise error(fn.loc, f"argument {name} of @{fn.name} is an event token: tokens are "
                                    "produced by tile ops, not passed in")
            scope.types[name] = ty
        _Verifier(isa).block(fn.body.ops, scope)


class _Verifier:
    def __init__(self, isa: ISA):
        self.isa = isa

    def block(self, ops: list[A.Op], scope: _Scope) -> None:
        for op in ops:
            self.op(op, scope)

    def op(self, op: A.Op, scope: _Scope) -> None:
        self._uses(op, scope)
        name = op.name
        if name == "scf.for":
            self.loop(op, scope)
        elif name == "scf.if":
            cond = scope.types.get(str(op.operands[0])) if op.operands else None
            if cond != A.ScalarType("i1"):
                raise error(op, f"condition has type {cond}, expected i1")
            for region in op.regions:
                inner = _Scope(dict(scope.types), dict(scope.consts), dict(scope.valid))
                self.block(region.ops, inner)
                self._yield(op, region, op.result_types, inner)
            if op.result_types and len(op.regions) != 2:
                raise error(op, "with results needs an else region")
        elif op.regions:
            raise error(op, "has a region, which the tile-level form supports only in scf.for and scf.if")
        elif name.startswith(TILE_PREFIX):
            self.tile(op, scope)
        elif name == SUBVIEW:
            self.subview(op, scope)
        elif name in INDEX_OPS:
            for v in op.operands:
                if scope.types.get(str(v)) != op.result_types[0]:
                    raise error(op, f"operand {v} has type {scope.types.get(str(v))}, expected "
                                    f"{op.result_types[0]}")
        if name in ("pto.constant", "arith.constant") and isinstance(op.attrs.get("value"), (int, float)):
            scope.consts[op.results[0]] = op.attrs["value"]  # type: ignore[assignment]
        self._defs(op, scope)

    def loop(self, op: A.Op, scope: _Scope) -> None:
        inner = _Scope(dict(scope.types), dict(scope.consts), dict(scope.valid))
        body = op.regions[0]
        iv_type = body.arg_types[0] if body.arg_types else _INDEX  # index, or the type written after the loop
        for arg, ty in zip(body.args, [iv_type, *op.result_types], strict=False):
            inner.types[arg] = ty
        for init, ty in zip(op.operands[3:], op.result_types, strict=False):
            if isinstance(ty, A.EventType):
                raise error(op, "event tokens cannot be loop-carried (the loop fences order iterations)")
            _same_type(op, init, ty, scope.types[str(init)])
        self.block(body.ops, inner)
        self._yield(op, body, op.result_types, inner)

    def _yield(self, op: A.Op, region: A.Region, types: list[A.Type], scope: _Scope) -> None:
        """The region's terminating ``scf.yield`` gives one value of each result type."""
        last = region.ops[-1] if region.ops else None
        values = last.operands if last is not None and last.name == "scf.yield" else []
        if len(values) != len(types):
            raise error(op, f"region yields {len(values)} value(s) for {len(types)} result(s)")
        for v, ty in zip(values, types, strict=False):
            _same_type(last, v, ty, scope.types[str(v)])  # type: ignore[arg-type]

    # ---- SSA

    def _uses(self, op: A.Op, scope: _Scope) -> None:
        waits = op.groups.get("wait", [])
        values = [v for v in op.operands if isinstance(v, str)]
        for key, group in op.groups.items():
            if key != "wait":
                values.extend(v for v in group if isinstance(v, str))
        for v in values + [str(w) for w in waits]:
            if v not in scope.types:
                raise error(op, f"uses {v}, which is not defined before it (SSA dominance)")
        for v in values:
            if isinstance(scope.types[v], A.EventType):
                raise error(op, f"uses the event token {v} as an operand: tokens may only appear in "
                                "the wait(...) list of an op that may wait")
        for w in waits:
            if not isinstance(scope.types[str(w)], A.EventType):
                raise error(op, f"waits on {w}, which is not an event token (it is {scope.types[str(w)]})")
        if waits and not op.name.startswith(TILE_PREFIX):
            raise error(op, "cannot wait: only pto.tile.* ops take a wait(...) list")

    def _defs(self, op: A.Op, scope: _Scope) -> None:
        if op.results and len(op.results) != len(op.result_types):
            raise error(op, f"defines {len(op.results)} value(s) but has {len(op.result_types)} result type(s)")
        for name, ty in zip(op.results, op.result_types, strict=False):
            if name in scope.types:
                raise error(op, f"redefines {name} (SSA values are defined once)")
            scope.types[name] = ty

    # ---- ops

    def subview(self, op: A.Op, scope: _Scope) -> None:
        src_t = scope.types[str(op.operands[0])]
        if not isinstance(src_t, A.TileMemRefType):
            raise error(op, f"source has type {src_t}, expected a pto.memref")
        _same_type(op, op.operands[0], op.operand_types[0], src_t)
        res = op.result_types[0]
        if not isinstance(res, A.TileMemRefType):
            raise error(op, f"result type {res} is not a pto.memref")
        rank = len(src_t.shape)
        for key in ("offsets", "sizes", "strides"):
            if len(op.groups[key]) != rank:
                raise error(op, f"has {len(op.groups[key])} {key} for a rank-{rank} memref")
        self._index_operands(op, op.groups["offsets"], scope)
        sizes = [scope.consts.get(s) if isinstance(s, str) else s for s in op.groups["sizes"]]
        if tuple(sizes) != tuple(res.shape):
            raise error(op, f"result shape {_dims(res.shape)} differs from the sizes [{_dims(tuple(sizes))}]")
        if res.elem != src_t.elem:
            raise error(op, f"result element type {res.elem} differs from the source's {src_t.elem}")
        offsets = [scope.consts.get(o) if isinstance(o, str) else o for o in op.groups["offsets"]]
        for d, (o, s, n) in enumerate(zip(offsets, sizes, src_t.shape, strict=False)):
            if isinstance(o, int) and isinstance(s, int) and n is not None and o + s > n:
                raise error(op, f"window [{o}, {o + s}) of dim {d} exceeds the source's {n}")

    def _index_operands(self, op: A.Op, values: list[A.Operand], scope: _Scope) -> None:
        for v in values:
            if isinstance(v, str) and scope.types.get(v) != _INDEX:
                raise error(op, f"index operand {v} has type {scope.types.get(v)}, expected index")

    def tile(self, op: A.Op, scope: _Scope) -> None:
        d = tile_op(op.name, self.isa)
        if d is None:
            raise error(op, "is not a tile op (no such pto.tile.* op or level-2 instruction)")
        for v, ty in zip(op.operands, op.operand_types, strict=False):
            _same_type(op, v, ty, scope.types[str(v)])
        self._results(op, d)
        _RULES[d.rule](self, op, d, scope)
        self._valid(op, scope)

    def _results(self, op: A.Op, d: TileOpDef) -> None:
        events = [t for t in op.result_types if isinstance(t, A.EventType)]
        tiles = [t for t in op.result_types if isinstance(t, A.TileType)]
        want_tiles = 0 if d.rule == "store" else 1
        if len(tiles) != want_tiles or len(events) > 1 or len(tiles) + len(events) != len(op.result_types):
            shape = "an optional event" if d.rule == "store" else "a tile and an optional event"
            raise error(op, f"results are {', '.join(map(str, op.result_types)) or 'none'}; expected {shape}")
        if len(op.operands) != len(op.operand_types):
            raise error(op, f"has {len(op.operands)} operand(s) but {len(op.operand_types)} operand type(s)")
        if events and events[0].producer is not None:
            src = _tile_operands(op)[0] if d.rule == "store" else None
            want = producer_opcode(d, src.loc if src is not None else None)
            if events[0].producer != want:
                raise error(op, f"event producer is #pto.op<{events[0].producer}>, but this op produces "
                                f"#pto.op<{want}>")

    def _valid(self, op: A.Op, scope: _Scope) -> None:
        valid = op.groups.get("valid")
        if valid is None:
            return
        res = _result_tile(op)
        if res is None:
            raise error(op, "has a valid region but no tile result")
        if len(valid) != len(res.shape):
            raise error(op, f"valid has {len(valid)} entries for a rank-{len(res.shape)} tile")
        self._index_operands(op, valid, scope)
        resolved = [scope.consts.get(v) if isinstance(v, str) else v for v in valid]
        scope.valid[op.results[0]] = [x if isinstance(x, int) else None for x in resolved]
        for d, (v, n) in enumerate(zip(valid, res.shape, strict=False)):
            value = scope.consts.get(v) if isinstance(v, str) else v
            if isinstance(value, int) and not (0 < value and (n is None or value <= n)):
                raise error(op, f"valid[{d}] = {value} is outside (0, {n}] (0 < valid[d] <= shape[d])")


# ---- rules per op (rank and shape)


def _tile_operands(op: A.Op) -> list[A.TileType]:
    return [t for t in op.operand_types if isinstance(t, A.TileType)]


def _result_tile(op: A.Op) -> A.TileType | None:
    return next((t for t in op.result_types if isinstance(t, A.TileType)), None)


def _count(op: A.Op, d: TileOpDef) -> tuple[list[A.TileType], A.TileType | None]:
    tiles = _tile_operands(op)
    scalars = [t for t in op.operand_types if isinstance(t, A.ScalarType)]
    if len(tiles) != d.tiles or len(scalars) != d.scalars or len(op.operand_types) != d.tiles + d.scalars:
        want = f"{d.tiles} tile(s)" + (f" and {d.scalars} scalar(s)" if d.scalars else "")
        raise error(op, f"takes {want}, got {len(op.operand_types)} operand(s): "
                        f"{', '.join(map(str, op.operand_types))}")
    if op.operand_types[: d.tiles] != tiles:
        raise error(op, "takes its tile operands first")
    return tiles, _result_tile(op)


def _loc(op: A.Op, ty: A.TileType, want: str, what: str) -> None:
    if ty.loc is not None and ty.loc != want:
        raise error(op, f"{what} must be in loc {want}, not {ty.loc}")


def _rank2(op: A.Op, tiles: list[A.TileType]) -> None:
    for t in tiles:
        if len(t.shape) != 2:
            raise error(op, f"requires rank-2 tiles, got {t}")


def _rule_same(v: _Verifier, op: A.Op, d: TileOpDef, scope: _Scope) -> None:
    tiles, res = _count(op, d)
    assert res is not None
    for t in tiles:
        if t.shape != res.shape or t.elem != res.elem:
            raise error(op, f"tile rank, shape and element type must match: {t} vs result {res}")
    if d.rule == "scalar":
        for t in op.operand_types[d.tiles:]:
            if not isinstance(t, A.ScalarType) or t.name == "index":
                raise error(op, f"scalar operand has type {t}, expected an element-type scalar")


def _rule_reduce(v: _Verifier, op: A.Op, d: TileOpDef, scope: _Scope) -> None:
    tiles, res = _count(op, d)
    assert res is not None
    _rank2(op, [*tiles, res])
    r, c = tiles[0].shape
    want = (r, 1) if d.rule == "row_reduce" else (1, c)
    if res.shape != want or res.elem != tiles[0].elem:
        raise error(op, f"result must be tile<{_dims(want)}x{tiles[0].elem}>, got {res}")


def _rule_expand(v: _Verifier, op: A.Op, d: TileOpDef, scope: _Scope) -> None:
    tiles, res = _count(op, d)
    assert res is not None
    _rank2(op, [*tiles, res])
    a, b = tiles
    r, c = a.shape
    want = (r, 1) if d.rule == "row_expand" else (1, c)
    if b.shape != want:
        raise error(op, f"second operand must have shape {_dims(want)}, got {b}")
    if res.shape != a.shape or not (a.elem == b.elem == res.elem):
        raise error(op, f"result must match the first operand {a}, got {res}")


def _rule_cvt(v: _Verifier, op: A.Op, d: TileOpDef, scope: _Scope) -> None:
    tiles, res = _count(op, d)
    assert res is not None
    if tiles[0].shape != res.shape:
        raise error(op, f"converts element types only: shapes {_dims(tiles[0].shape)} and {_dims(res.shape)} differ")


def _rule_mov(v: _Verifier, op: A.Op, d: TileOpDef, scope: _Scope) -> None:
    tiles, res = _count(op, d)
    assert res is not None and d.src_loc and d.dst_loc
    _loc(op, tiles[0], d.src_loc, "the source")
    _loc(op, res, d.dst_loc, "the result")
    if tiles[0].shape != res.shape:
        raise error(op, f"moves keep the shape: {_dims(tiles[0].shape)} -> {_dims(res.shape)}")
    if tiles[0].elem != res.elem and d.src_loc != "Acc":
        raise error(op, f"moves keep the element type ({tiles[0].elem} -> {res.elem}); only a2v converts")


def _rule_extract(v: _Verifier, op: A.Op, d: TileOpDef, scope: _Scope) -> None:
    tiles, res = _count(op, d)
    assert res is not None
    src = tiles[0]
    _rank2(op, [src, res])
    idx = op.groups.get("indices", [])
    if len(idx) != 2:
        raise error(op, f"takes 2 indices [%r, %c], got {len(idx)}")
    v._index_operands(op, idx, scope)
    if src.elem != res.elem:
        raise error(op, f"keeps the element type: {src.elem} -> {res.elem}")
    for dim, (i, n, m) in enumerate(zip(idx, res.shape, src.shape, strict=False)):
        value = scope.consts.get(i) if isinstance(i, str) else i
        if isinstance(value, int) and n is not None and m is not None and (value < 0 or value + n > m):
            raise error(op, f"extract out of bounds in dim {dim}: [{value}, {value + n}) of a source of {m}")
    if res.loc in ("Left", "Right"):
        _loc(op, src, "Mat", "the source")


def _rule_matmul(v: _Verifier, op: A.Op, d: TileOpDef, scope: _Scope) -> None:
    tiles, res = _count(op, d)
    assert res is not None
    _rank2(op, [*tiles, res])
    acc_in = tiles[0] if d.rule == "matmul_acc" else None
    a, b = (tiles[1], tiles[2]) if acc_in is not None else (tiles[0], tiles[1])
    bias = tiles[2] if d.rule == "matmul_bias" else None
    (m, k), (k2, n) = a.shape, b.shape
    if k != k2:
        raise error(op, f"inner dimensions differ: {a} x {b}")
    if res.shape != (m, n):
        raise error(op, f"result must be {m}x{n}, got {res}")
    if acc_in is not None and (acc_in.shape != res.shape or acc_in.elem != res.elem):
        raise error(op, f"accumulator {acc_in} must match the result {res}")
    if bias is not None and bias.shape != (1, n):
        raise error(op, f"bias must be 1x{n}, got {bias}")
    if a.elem != b.elem:
        raise error(op, f"operand element types differ: {a.elem} and {b.elem}")
    _loc(op, a, "Left", "the left operand")
    _loc(op, b, "Right", "the right operand")
    _loc(op, res, "Acc", "the result")
    if bias is not None:
        _loc(op, bias, "Bias", "the bias")


def _rule_load(v: _Verifier, op: A.Op, d: TileOpDef, scope: _Scope) -> None:
    mem = op.operand_types[0]
    valid = [scope.consts.get(x) if isinstance(x, str) else x for x in op.groups.get("valid", [])]
    _memref_tile(op, mem, _result_tile(op), scope, v, valid or None)


def _rule_store(v: _Verifier, op: A.Op, d: TileOpDef, scope: _Scope) -> None:
    if len(op.operand_types) != 2 or not isinstance(op.operand_types[0], A.TileType):
        raise error(op, "takes a tile and a memref: pto.tile.store %t, %m[...]")
    _memref_tile(op, op.operand_types[1], op.operand_types[0], scope, v, scope.valid.get(str(op.operands[0])))


def _memref_tile(op: A.Op, mem: A.Type, tile: A.TileType | None, scope: _Scope, v: _Verifier,
                 valid: list | None = None) -> None:
    """A load/store moves the tile's valid region (its shape when it has no valid list)."""
    if not isinstance(mem, A.TileMemRefType):
        raise error(op, f"memory operand has type {mem}, expected a pto.memref")
    assert tile is not None
    if mem.elem != tile.elem:
        raise error(op, f"element types differ: memref {mem.elem}, tile {tile.elem}")
    if len(mem.shape) != len(tile.shape):
        raise error(op, f"memref rank {len(mem.shape)} differs from tile rank {len(tile.shape)}")
    idx = op.groups.get("indices", [])
    if len(idx) != len(mem.shape):
        raise error(op, f"takes {len(mem.shape)} indices into the memref, got {len(idx)}")
    v._index_operands(op, idx, scope)
    # a dynamic valid size is checked when the kernel runs (the emulator's bounds check)
    extents = [t if valid is None else (vd if isinstance(vd, int) else None)
               for vd, t in zip(valid or [None] * len(tile.shape), tile.shape, strict=False)]
    for dim, (i, t, m) in enumerate(zip(idx, extents, mem.shape, strict=False)):
        value = scope.consts.get(i) if isinstance(i, str) else i
        if isinstance(value, int) and t is not None and m is not None and value + t > m:
            raise error(op, f"tile window [{value}, {value + t}) of dim {dim} exceeds the memref's {m}")


_RULES = {
    "same": _rule_same, "scalar": _rule_same, "row_reduce": _rule_reduce, "col_reduce": _rule_reduce,
    "row_expand": _rule_expand, "col_expand": _rule_expand, "cvt": _rule_cvt, "mov": _rule_mov,
    "extract": _rule_extract, "matmul": _rule_matmul, "matmul_acc": _rule_matmul,
    "matmul_bias": _rule_matmul, "load": _rule_load, "store": _rule_store,
}


def _same_type(op: A.Op, value: A.Operand, written: A.Type, defined: A.Type) -> None:
    if isinstance(written, A.TileType) and isinstance(defined, A.TileType):
        ok = written.shape == defined.shape and written.elem == defined.elem and all(
            w is None or dd is None or w == dd
            for w, dd in ((written.loc, defined.loc), (written.layout, defined.layout)))
    elif isinstance(written, A.TileMemRefType) and isinstance(defined, A.TileMemRefType):
        ok = (written.shape, written.elem) == (defined.shape, defined.elem) and (
            written.strides is None or defined.strides is None or written.strides == defined.strides)
    else:
        ok = written == defined
    if not ok:
        raise error(op, f"operand {value} is written as {written} but defined as {defined}")


def _dims(shape: tuple) -> str:
    return "x".join("?" if d is None else str(d) for d in shape)


# ------------------------------------------------------------------------------ target legality


def target_name(module: A.Module) -> str:
    """The module's ``pto.target`` (``#pto.target<a3>``), also ``pto.target_arch``; a3 by default."""
    for key in ("pto.target", "pto.target_arch"):
        value = module.attrs.get(key)
        if isinstance(value, A.EnumAttr):
            return value.value.lower()
        if isinstance(value, str):
            return value.lower()
    return "a3"


def check_target(module: A.Module, isa: ISA, machine: Machine) -> None:
    """Target legality of a verified module whose tile info is inferred (every tile has a loc and
    a layout); raises :class:`VerifyError` at the first illegal tile or op."""
    target = target_name(module)
    if target not in A2A3_TARGETS:
        raise error(module.loc, f"target '{target}' is not supported by machine '{machine.name}' "
                                f"(A2/A3 targets: {', '.join(A2A3_TARGETS)})")
    for fn in module.functions:
        for op in _walk(fn.body.ops):
            if op.name.startswith(TILE_PREFIX):
                _legal(op, isa, machine)


def _walk(ops: list[A.Op]):
    for op in ops:
        yield op
        for r in op.regions:
            yield from _walk(r.ops)


def _legal(op: A.Op, isa: ISA, machine: Machine) -> None:
    d = tile_op(op.name, isa)
    assert d is not None
    spec = isa[d.mnemonic]
    tiles = [*_tile_operands(op)]
    res = _result_tile(op)
    for t in [*tiles, *([res] if res is not None else [])]:
        _legal_tile(op, t, machine)
    checked = tiles[:1] if d.rule == "store" else ([res] if res is not None else tiles[:1])
    for t in checked:
        if spec.dtypes and t.elem not in spec.dtypes:
            raise error(op, f"element type {t.elem} is not supported by {d.mnemonic} on this target "
                            f"(supported: {', '.join(spec.dtypes)})")
    ins_locs = [o.locs for o in spec.ins if "tile" in o.kinds and o.name != "tmp"]
    for t, locs in zip(tiles, ins_locs, strict=False):
        if locs is not None and LOC_TO_BUF[str(t.loc)] not in locs:
            raise error(op, f"{d.mnemonic} cannot read a tile in loc {t.loc}")
    out_locs = spec.outs[0].locs if spec.outs else None
    if res is not None and out_locs is not None and LOC_TO_BUF[str(res.loc)] not in out_locs:
        raise error(op, f"{d.mnemonic} cannot write a tile in loc {res.loc}")
    if d.rule in ("mov", "extract") and res is not None:
        try:
            spec.pipe.resolve(LOC_TO_BUF[str(tiles[0].loc)], LOC_TO_BUF[str(res.loc)])
        except ValueError:
            raise error(op, f"no {d.mnemonic} path from {tiles[0].loc} to {res.loc} on this target") from None


def _legal_tile(op: A.Op, t: A.TileType, machine: Machine) -> None:
    if len(t.shape) != 2:
        raise error(op, f"tile {t} has rank {len(t.shape)}; tile buffers are 2-D on this target")
    if None in t.shape:
        raise error(op, f"tile {t} has a dynamic dim; tile buffers need static shapes (use valid = [...])")
    if not is_known(t.elem):
        raise error(op, f"unknown element type {t.elem}")
    if t.loc is None or t.layout is None:
        raise error(op, f"tile {t} has no loc/layout (run infer-tile-info first)")
    buf = machine.buffers[LOC_TO_BUF[t.loc]]
    if buf.layouts and t.layout.upper() not in buf.layouts:  # the machine record's legal layouts
        legal = ", ".join(canonical_layout(x) or x for x in buf.layouts)
        raise error(op, f"layout {t.layout} is not legal in loc {t.loc} (legal: {legal})")
    rows, cols = t.shape
    esize = itemsize(t.elem)
    size = rows * cols * esize
    if size > buf.size:
        raise error(op, f"tile {t} needs {size} bytes but {buf.name} holds {buf.size}")
    blayout, slayout = LAYOUT_TO_BUF[t.layout]
    block = machine.buffers["vec"].align  # the UB block: ND rows / DN columns are whole blocks
    if slayout == "none_box" and blayout == "row_major" and (cols * esize) % block:
        raise error(op, f"tile {t}: a row of {cols * esize} bytes is not a multiple of {block} bytes")
    if slayout == "none_box" and blayout == "col_major" and (rows * esize) % block and cols != 1:
        raise error(op, f"tile {t}: a column of {rows * esize} bytes is not a multiple of {block} bytes")
    if slayout != "none_box":
        ri, ci = _box(slayout, esize, buf.fractal)
        if cols % ci or (rows % ri and rows != 1):
            raise error(op, f"tile {t}: {t.layout} needs rows a multiple of {ri} and cols of {ci}")


def _box(slayout: str, esize: int, fractal: int) -> tuple[int, int]:
    """Inner box of a fractal layout (pto-text-format.md §5.3): 512-byte boxes are 16 x 32/esize
    (row_major) or 32/esize x 16 (col_major); 1024-byte boxes 16 x 16."""
    if fractal == 1024:
        return 16, 16
    return (16, 32 // esize) if slayout == "row_major" else (32 // esize, 16)
