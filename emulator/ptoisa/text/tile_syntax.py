"""Syntax of the tile-level SSA form (seed 002): its types and its ops, read into the one AST.

The level-2 parser (:mod:`ptoisa.text.parser`) calls in here for the type keywords ``tile<..>``,
``pto.memref<..>`` (also ``!pto.tile``/``!pto.memref``) and ``!pto.event<..>``, and for the op names
``pto.constant``, the index ops (``pto.muli``...), ``pto.memref.subview`` and every ``pto.tile.*``.
Kept apart from the level-2 grammar so each reads like its EBNF; both share the token cursor, the
source locations and the ``file:line:col: message`` errors of the one parser.

AST shape of the tile-level ops (what the verifier and the passes rely on):

* ``pto.constant``: ``attrs["value"]``, ``result_types = [T]``.
* index ops ``pto.addi %a, %b : index``: ``operands``, ``operand_types = [T, T]``, ``result_types = [T]``.
* ``pto.memref.subview %m[%o0, %o1] [32, 32] [1, 1] : A to B``: ``operands = [m]``,
  ``groups = {"offsets", "sizes", "strides"}`` (SSA names or ints), ``operand_types = [A]``,
  ``result_types = [B]``.
* ``pto.tile.*``: ``operands`` in written order (tiles, memrefs, scalars), the bracket list after the
  indexed operand in ``groups["indices"]`` (load/extract: operand 0, store: operand 1), the
  ``wait(...)`` list in ``groups["wait"]``, ``{valid = [..]}`` in ``groups["valid"]`` and
  ``{loc, layout}`` as ``EnumAttr("loc", "Vec")``/``EnumAttr("layout", "ND")`` in ``attrs``.
  ``operand_types`` has one type per operand in operand order (for store: tile, memref, although the
  text writes ``memref, tile``); ``result_types`` is ``[tile]``, ``[tile, event]``, ``[event]``
  (async store) or ``[]``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ptoisa.text.ast import (
    TILE_LAYOUTS,
    TILE_LOCS,
    EnumAttr,
    EventType,
    Op,
    Operand,
    TileMemRefType,
    TileType,
    Type,
)

if TYPE_CHECKING:  # the parser passes itself in; no runtime import (it imports this module)
    from ptoisa.text.parser import Parser

INDEX_OPS = frozenset("pto." + n for n in ("addi", "subi", "muli", "divi", "remi", "mini", "maxi"))
SCALAR_OPS = INDEX_OPS | {"pto.constant"}
SUBVIEW = "pto.memref.subview"
TILE_PREFIX = "pto.tile."
# The operand that carries the `[indices]` bracket, by op.
INDEXED_OPERAND = {"pto.tile.load": 0, "pto.tile.store": 1, "pto.tile.extract": 0}
MEMREF_SPACES = ("gm", "ub", "l1", "l0a", "l0b", "l0c")

_LOC_BY_LOWER = {n.lower(): n for n in TILE_LOCS}
_LAYOUT_BY_LOWER = {n.lower(): n for n in TILE_LAYOUTS}
_F8_RE = re.compile(r"f8e(\d)m(\d)(\w*)\Z")
_ELEM_RE = re.compile(r"(?:[su]?i\d+|f\d+|bf16|tf32|f\d+E\d+M\d+\w*)\Z")


def is_tile_level_op(name: str) -> bool:
    """An op name only the tile-level form has."""
    return name.startswith(TILE_PREFIX) or name in SCALAR_OPS or name == SUBVIEW


def canonical_loc(value: str) -> str | None:
    return _LOC_BY_LOWER.get(value.lower())


def canonical_layout(value: str) -> str | None:
    return _LAYOUT_BY_LOWER.get(value.lower())


def canonical_elem(name: str) -> str:
    """``f8e4m3fn`` (the seed's spelling) -> ``f8E4M3FN`` (the dtype table's)."""
    m = _F8_RE.match(name)
    if m:
        return f"f8E{m.group(1)}M{m.group(2)}{m.group(3).upper()}"
    return name


# ----------------------------------------------------------------------------------------- types


def parse_tile_type(p: Parser) -> TileType:
    """tile-type ::= ('tile' | '!pto.tile') '<' shape ('x' elem) (',' '#pto.tile_info' '<' kv* '>')? '>'"""
    p.advance()
    p.expect("<", "'<' after tile")
    shape, elem = _shape(p)
    loc = layout = None
    if p.take(","):
        p.expect("hash", "#pto.tile_info<loc=..., layout=...>", "#pto.tile_info")
        p.expect("<", "'<' after #pto.tile_info")
        while True:
            key_tok = p.expect("bare", "'loc' or 'layout'")
            p.expect("=", f"'=' after '{key_tok.text}'")
            val = p.expect("bare", f"a {key_tok.text} value").text
            if key_tok.text == "loc":
                loc = canonical_loc(val)
                if loc is None:
                    raise p.error(f"unknown tile loc '{val}' (expected one of {', '.join(TILE_LOCS)})",
                                  p.toks[p.pos - 1])
            elif key_tok.text == "layout":
                layout = canonical_layout(val)
                if layout is None:
                    raise p.error(f"unknown tile layout '{val}' (expected one of {', '.join(TILE_LAYOUTS)})",
                                  p.toks[p.pos - 1])
            else:
                raise p.error(f"unknown #pto.tile_info key '{key_tok.text}' (expected loc or layout)", key_tok)
            if p.take(">"):
                break
            p.expect(",", "',' or '>' in #pto.tile_info")
    p.close(">", "tile<...>")
    return TileType(shape, elem, loc, layout)


def parse_memref_type(p: Parser) -> TileMemRefType:
    """memref ::= 'pto.memref' '<' shape (',' strided<[..], offset: o> | ',' '{' space/layout '}')* '>'"""
    p.advance()
    p.expect("<", "'<' after pto.memref")
    shape, elem = _shape(p)
    space, layout = "gm", "ND"
    strides: tuple[int | None, ...] | None = None
    offset: int | None = 0
    while p.take(","):
        if p.at_kw("strided"):
            strides, offset = p._parse_strided()
        elif p.at("{"):
            space, layout = _memref_attrs(p, space, layout)
        else:
            raise p.error(f"expected strided<...> or {{space = ..., layout = ...}} in pto.memref<...>{p._found()}")
    p.close(">", "pto.memref<...>")
    if strides is not None and len(strides) != len(shape):
        raise p.error(f"pto.memref has {len(shape)} dims but {len(strides)} strides", p.toks[p.pos - 1])
    return TileMemRefType(shape, elem, space, layout, strides, offset)


def _memref_attrs(p: Parser, space: str, layout: str) -> tuple[str, str]:
    p.advance()
    while True:
        key = p.expect("bare", "'space' or 'layout'")
        p.expect("=", f"'=' after '{key.text}'")
        val_tok = p.tok
        attr = p.parse_attr_value()
        if not isinstance(attr, EnumAttr):
            raise p.error(f"expected #pto.{key.text}<...>", val_tok)
        if key.text == "space":
            if attr.value.lower() not in MEMREF_SPACES:
                raise p.error(f"unknown memref space '{attr.value}' (expected one of {', '.join(MEMREF_SPACES)})",
                              val_tok)
            space = attr.value.lower()
        elif key.text == "layout":
            canon = canonical_layout(attr.value)
            if canon is None:
                raise p.error(f"unknown layout '{attr.value}' (expected one of {', '.join(TILE_LAYOUTS)})", val_tok)
            layout = canon
        else:
            raise p.error(f"unknown pto.memref attribute '{key.text}' (expected space or layout)", key)
        if p.take("}"):
            return space, layout
        p.expect(",", "',' or '}' in the memref attributes")


def parse_event_type(p: Parser) -> EventType:
    """event ::= '!pto.event' ('<' (producer = #pto.op<X> | scope = #pto.scope<S> | eid = N),* '>')?"""
    p.advance()
    producer = scope = None
    eid = None
    if not p.take("<"):
        return EventType()
    while True:
        key = p.expect("bare", "'producer', 'scope' or 'eid'")
        p.expect("=", f"'=' after '{key.text}'")
        if key.text == "eid":
            eid = int(p.expect("int", "an event id").text)
        else:
            val_tok = p.tok
            attr = p.parse_attr_value()
            if not isinstance(attr, EnumAttr):
                raise p.error(f"expected #pto.{'op' if key.text == 'producer' else 'scope'}<...>", val_tok)
            if key.text == "producer":
                producer = attr.value.upper()
            elif key.text == "scope":
                if attr.value not in ("intra", "inter"):
                    raise p.error(f"unknown event scope '{attr.value}' (expected intra or inter)", val_tok)
                scope = attr.value
            else:
                raise p.error(f"unknown !pto.event parameter '{key.text}'", key)
        if p.take(">"):
            return EventType(producer, scope, eid)
        p.expect(",", "',' or '>' in !pto.event<...>")


def _shape(p: Parser) -> tuple[tuple[int | None, ...], str]:
    tok = p.tok
    if tok.kind == "shape":
        head, _, elem = tok.text.rpartition("x")
        elem = canonical_elem(elem)
        if _ELEM_RE.match(elem) and all(d == "?" or d.isdigit() for d in head.split("x")):
            p.advance()
            return tuple(None if d == "?" else int(d) for d in head.split("x")), elem
        raise p.error(f"invalid shape '{tok.text}'")
    raise p.error(f"expected a shape like 32x32xf32{p._found()}")


# ------------------------------------------------------------------------------------------ ops


def parse_scalar_op(p: Parser, op: Op) -> None:
    """constant ::= 'pto.constant' literal ':' type;  index-op ::= name ssa ',' ssa ':' type"""
    if op.name == "pto.constant":
        p.parse_constant(op)
        return
    op.operands.append(p.expect("ssa", "an SSA operand like %c0").text)
    p.expect(",", f"',' between the operands of '{op.name}'")
    op.operands.append(p.expect("ssa", "an SSA operand like %c0").text)
    p.expect(":", "':' and the operand type")
    ty = p.parse_type()
    op.operand_types = [ty, ty]
    op.result_types = [ty]


def parse_subview(p: Parser, op: Op) -> None:
    """subview ::= ssa '[' offsets ']' '[' sizes ']' '[' strides ']' ':' memref 'to' memref"""
    op.operands.append(p.expect("ssa", "the source memref like %arg0").text)
    for key in ("offsets", "sizes", "strides"):
        p.expect("[", f"'[' to open the {key}")
        op.groups[key] = p.parse_operand_list("]", f"the {key}")
    p.expect(":", "':' and the source memref type")
    op.operand_types = [p.parse_type()]
    p.expect_kw("to", "'to' and the result memref type")
    op.result_types = [p.parse_type()]


def parse_tile_op(p: Parser, op: Op) -> None:
    """tile-op ::= operand (',' operand)* wait? attrs? ':' types ('->' types)?
    operand ::= ssa ('[' operands ']')?;  wait ::= 'wait' '(' ssa (',' ssa)* ')'"""
    while p.at("ssa") and not p.starts_statement():
        op.operands.append(p.advance().text)
        if p.take("["):
            if "indices" in op.groups:
                raise p.error("only one operand of a tile op takes an index list", p.toks[p.pos - 1])
            op.groups["indices"] = p.parse_operand_list("]", "the index list")
        if not p.take(","):
            break
    if p.take_kw("wait"):
        p.expect("(", "'(' after wait")
        op.groups["wait"] = [str(v) for v in p.parse_operand_list(")", "the wait list")]
        for v in op.groups["wait"]:
            if not isinstance(v, str):
                raise p.error("wait(...) takes event tokens like %e0", p.toks[p.pos - 1])
    if p.at("{"):
        _tile_attrs(p, op)
    p.expect(":", f"':' and the types of '{op.name}'")
    types = p._parse_type_list()
    if p.take("->"):
        results = p._parse_type_list()
        op.operand_types = types * len(op.operands) if len(types) == 1 and len(op.operands) > 1 else types
        op.result_types = results
        return
    _assign_types(p, op, types)


def _assign_types(p: Parser, op: Op, types: list[Type]) -> None:
    """The arrow-less type list: ``memref, tile[, event]`` for load/store, else ``T[, event]``
    (every operand and the result of type T) or one type per operand."""
    events = [t for t in types if isinstance(t, EventType)]
    plain = [t for t in types if not isinstance(t, EventType)]
    if types[len(plain):] != events:
        raise p.error("event types go last in the type list", p.toks[p.pos - 1])
    if op.name in ("pto.tile.load", "pto.tile.store"):
        if len(plain) != 2:
            raise p.error(f"'{op.name}' takes ': memref-type, tile-type' (and an event type when async)",
                          p.toks[p.pos - 1])
        memref, tile = plain
        if op.name == "pto.tile.load":
            op.operand_types = [memref]
            op.result_types = [tile, *events]
        else:
            op.operand_types = [tile, memref]
            op.result_types = list(events)
        return
    if len(plain) == 1:
        op.operand_types = plain * len(op.operands)
        op.result_types = [plain[0], *events]
    elif plain:
        op.operand_types = plain
        op.result_types = [plain[0], *events]
    else:
        op.result_types = list(events)


def _tile_attrs(p: Parser, op: Op) -> None:
    """'{' (loc = #pto.loc<X> | layout = #pto.layout<Y> | valid = '[' (int|ssa),* ']' | key = attr),* '}'"""
    p.advance()
    if p.take("}"):
        return
    while True:
        key = p.expect("bare", "an attribute name").text
        p.expect("=", f"'=' after '{key}'")
        if key == "valid":
            p.expect("[", "'[' to open the valid list")
            op.groups["valid"] = p.parse_operand_list("]", "the valid list")
        else:
            val_tok = p.tok
            value = p.parse_attr_value()
            if key in ("loc", "layout"):
                canon = None
                if isinstance(value, EnumAttr) and value.kind == key:
                    canon = (canonical_loc if key == "loc" else canonical_layout)(value.value)
                if canon is None:
                    names = TILE_LOCS if key == "loc" else TILE_LAYOUTS
                    raise p.error(f"expected #pto.{key}<{'|'.join(names)}>", val_tok)
                value = EnumAttr(key, canon)
            op.attrs[key] = value
        if p.take("}"):
            return
        p.expect(",", "',' or '}' in the attribute dict")


# ------------------------------------------------------------------------------------- printing


def format_tile_level_op(op: Op, fmt_attr, fmt_constant) -> str:
    """The pretty form of a tile-level op (without results), the inverse of the parsers above."""
    name = op.name
    if name == "pto.constant":
        ty = op.result_types[0] if op.result_types else None
        return f"{name} {fmt_constant(op.attrs.get('value'), ty)} : {ty}"
    if name in INDEX_OPS:
        return f"{name} {', '.join(str(o) for o in op.operands)} : {op.result_types[0]}"
    if name == SUBVIEW:
        groups = " ".join(f"[{_ops(op.groups.get(k, []))}]" for k in ("offsets", "sizes", "strides"))
        return f"{name} {op.operands[0]}{groups} : {op.operand_types[0]} to {op.result_types[0]}"
    parts = []
    indexed = INDEXED_OPERAND.get(name)
    for i, v in enumerate(op.operands):
        text = str(v)
        if i == indexed and "indices" in op.groups:
            text += f"[{_ops(op.groups['indices'])}]"
        parts.append(text)
    text = f"{name} {', '.join(parts)}" if parts else name
    if op.groups.get("wait"):
        text += f" wait({_ops(op.groups['wait'])})"
    attrs = [f"{k} = {fmt_attr(v)}" for k, v in op.attrs.items()]
    if "valid" in op.groups:
        attrs.append(f"valid = [{_ops(op.groups['valid'])}]")
    if attrs:
        text += " {" + ", ".join(attrs) + "}"
    return text + " : " + _tile_types(op)


def _tile_types(op: Op) -> str:
    events = [t for t in op.result_types if isinstance(t, EventType)]
    plain_results = [t for t in op.result_types if not isinstance(t, EventType)]
    if op.name == "pto.tile.load":
        return ", ".join(str(t) for t in [op.operand_types[0], *plain_results, *events])
    if op.name == "pto.tile.store":
        return ", ".join(str(t) for t in [op.operand_types[1], op.operand_types[0], *events])
    ots = op.operand_types
    if plain_results and all(t == plain_results[0] for t in ots):
        return ", ".join(str(t) for t in [plain_results[0], *events])
    left = ", ".join(str(t) for t in ots)
    right = ", ".join(str(t) for t in op.result_types)
    return f"{left} -> {right}"


def _ops(values: list[Operand]) -> str:
    return ", ".join(str(v) for v in values)
