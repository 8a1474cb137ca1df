"""Print an AST :class:`Module` back to canonical `.pto` text.

Used by passes that rewrite kernels (automatic sync insertion) and write new `.pto` files. The output
uses the canonical verbose ``!pto.tile_buf<loc=..., ..., pad=N>`` form, long attribute spellings
(``#pto.pipe<PIPE_V>``, ``#pto<round_mode FLOOR>``) and each op's pretty form from the spec, so that
:func:`ptoisa.text.parser.parse_module` reads it back to an equal AST (locations aside).

The AST does not record which op-specific syntax an op was written in (``%t[%r, %c]`` vs a flat
operand list, leading vs trailing attribute dict, ...), so the few small fixed grammars are
described here in tables keyed by op name; every other op prints in the generic "plain" grammar
that the parser's fallback reads.
"""

from __future__ import annotations

import math
import os
import re
import struct
from contextvars import ContextVar
from dataclasses import dataclass

from ptoisa.isa.loader import load_isa
from ptoisa.isa.spec import PLAIN_SYNTAX, SyntaxForm
from ptoisa.text.ast import (
    Attr,
    DenseAttr,
    EnumAttr,
    Function,
    Module,
    Op,
    OpaqueAttr,
    Operand,
    Region,
    ScalarType,
    SymbolRef,
    Type,
    TypeAttr,
    UnitAttr,
)
from ptoisa.text.parser import ARITH_CAST_OPS, ENUM_KEYWORD_KINDS, RESULT_COLON_OPS
from ptoisa.text.tile_syntax import format_tile_level_op, is_tile_level_op

_BARE_KEY = re.compile(r"[A-Za-z_][\w$.]*\Z")
_BARE_SYM = re.compile(r"[A-Za-z_$.][\w$.\-]*\Z")
_INDENT = "  "

# How each op is written where the grammar has choices: the ISA spec's `syntax` of every pto op
# (isa_specs/instructions, read through ptoisa.isa), plus the few ops of other dialects.
_OTHER_DIALECTS: dict[str, SyntaxForm] = {
    "memref.alloc": SyntaxForm(form="paren"),
    "memref.load": SyntaxForm(indexed=(0, None)),
    "memref.store": SyntaxForm(indexed=(1, None)),
}
_SYNTAX_BY_DIR: dict[str, dict[str, SyntaxForm]] = {}


def _syntax(name: str) -> SyntaxForm:
    """The syntax form of op ``name`` (the spec directory is ``PYPTOEMU_ISA_DIR`` or the default)."""
    key = os.environ.get("PYPTOEMU_ISA_DIR", "")
    table = _SYNTAX_BY_DIR.get(key)
    if table is None:
        table = {"pto." + m: spec.syntax for m, spec in load_isa().instructions.items()}
        table.update(_OTHER_DIALECTS)
        _SYNTAX_BY_DIR[key] = table
    return table.get(name, PLAIN_SYNTAX)


# Groups written `key = %v` (one value) rather than `key = [..]`.
_SCALAR_GROUPS = frozenset({"addr", "valid_row", "valid_col"})


@dataclass(frozen=True)
class PrintStyle:
    """Spelling choices the text format allows, for writers whose output is compared byte for byte
    (the compiler's golden files). The default is the canonical spelling; every choice reads back to
    the same AST.

    ``short_enum_kinds``: enum kinds printed short, ``<PIPE_V>`` rather than ``#pto.pipe<PIPE_V>``.
    ``function_attrs_on_new_line``: a function's ``attributes {...}`` on a continuation line.
    ``bare_return``: ``return`` rather than ``func.return``.
    ``float_format``: a ``format()`` spec for finite float constants (``".6e"`` -> ``1.000000e+00``).
    """

    short_enum_kinds: frozenset[str] = frozenset()
    function_attrs_on_new_line: bool = False
    bare_return: bool = False
    float_format: str | None = None


CANONICAL = PrintStyle()
_STYLE: ContextVar[PrintStyle] = ContextVar("pto_print_style", default=CANONICAL)


def print_module(module: Module, style: PrintStyle = CANONICAL) -> str:
    """Text of ``module`` (always wrapped in ``module { }``) in ``style``, ending with a newline."""
    token = _STYLE.set(style)
    try:
        return _module_text(module)
    finally:
        _STYLE.reset(token)


def _module_text(module: Module) -> str:
    lines: list[str] = []
    head = "module"
    if module.attrs:
        head += f" attributes {format_attr_dict(module.attrs)}"
    lines.append(head + " {")
    for fn in module.functions:
        _print_function(fn, lines, 1)
    lines.append("}")
    return "\n".join(lines) + "\n"


def _print_function(fn: Function, lines: list[str], depth: int) -> None:
    ind = _INDENT * depth
    args = ", ".join(f"{a}: {t}" for a, t in zip(fn.args, fn.arg_types, strict=False))
    head = f"{ind}func.func {'private ' if fn.private else ''}{format_symbol(fn.name)}({args})"
    if fn.result_types:
        head += f" -> {_result_types(fn.result_types)}"
    if fn.attrs:
        if _STYLE.get().function_attrs_on_new_line:
            lines.append(head)
            head = ind + _INDENT * 2 + f"attributes {format_attr_dict(fn.attrs)}"
        else:
            head += f" attributes {format_attr_dict(fn.attrs)}"
    lines.append(head + " {")
    _print_ops(fn.body.ops, lines, depth + 1)
    lines.append(ind + "}")


def _print_ops(ops: list[Op], lines: list[str], depth: int) -> None:
    for op in ops:
        _print_op(op, lines, depth)


def _print_region_body(region: Region, lines: list[str], depth: int, label: bool = False) -> None:
    if label and region.args:
        args = ", ".join(f"{a}: {t}" for a, t in zip(region.args, region.arg_types, strict=False))
        lines.append(f"{_INDENT * (depth - 1)}^bb0({args}):")
    _print_ops(region.ops, lines, depth)


def _print_op(op: Op, lines: list[str], depth: int) -> None:
    ind = _INDENT * depth
    prefix = ind + (f"{format_results(op.results)} = " if op.results else "")
    if op.generic:
        _print_generic(op, prefix, lines, depth)
        return
    name = op.name
    if name == "scf.for":
        _print_for(op, prefix, lines, depth)
    elif name == "scf.if":
        text = f"{prefix}scf.if {op.operands[0] if op.operands else ''}"
        if op.result_types:
            text += f" -> ({_types(op.result_types)})"
        lines.append(text + " {")
        if op.regions:
            _print_region_body(op.regions[0], lines, depth + 1)
        if len(op.regions) > 1:
            lines.append(ind + "} else {")
            _print_region_body(op.regions[1], lines, depth + 1)
        lines.append(ind + "}")
    elif name == "scf.while":
        _print_while(op, prefix, lines, depth)
    elif op.regions:
        lines.append(f"{prefix}{_plain(op)} {{")
        _print_region_body(op.regions[0], lines, depth + 1)
        lines.append(ind + "}")
    else:
        lines.append(prefix + format_op_line(op))


def format_op_line(op: Op) -> str:
    """One region-free op (without results) in its pretty form."""
    name = op.name
    if op.is_dps:
        return _dps(op)
    if name in ("func.return", "scf.yield"):
        spelled = "return" if name == "func.return" and _STYLE.get().bare_return else name
        return spelled + _values_with_types(op.operands, op.operand_types)
    if name == "scf.condition":
        rest = _values_with_types(op.operands[1:], op.operand_types[1:])
        return f"scf.condition({_operand(op.operands[0]) if op.operands else ''}){rest}"
    if name == "func.call":
        callee = format_symbol(str(op.attrs.get("callee", "")))
        extra = {k: v for k, v in op.attrs.items() if k != "callee"}
        dict_text = f" {format_attr_dict(extra)}" if extra else ""
        return (
            f"func.call {callee}({_operands(op.operands)}){dict_text} : "
            f"({_types(op.operand_types)}) -> {_result_types(op.result_types, always_parens=True)}"
        )
    if name.startswith("arith."):
        return _arith(op)
    if is_tile_level_op(name):
        return format_tile_level_op(op, format_attr, _constant_value)
    if name == "memref.reinterpret_cast":
        return _reinterpret_cast(op)
    if name == "pto.barrier":
        return f"pto.barrier {format_attr(op.attrs['pipe'])}" + _dict_suffix(op.attrs, ("pipe",))
    if name in ("pto.sync.set", "pto.sync.wait"):
        ident = op.attrs["id"] if "id" in op.attrs else _operands(op.operands)
        return f"{name} {format_attr(op.attrs['pipe'])}, {ident}" + _dict_suffix(op.attrs, ("pipe", "id"))
    return _plain(op)


# ------------------------------------------------------------------------------------- op families


def _dps(op: Op) -> str:
    attrs = dict(op.attrs)
    ins_items = []
    fmt = attrs.pop("format", None)
    if isinstance(fmt, str):
        ins_items.append(format_string(fmt))
    ins_items.extend(_operand(v) for v in op.ins)
    if "maskPattern" in attrs and op.name == "pto.tgather":
        ins_items.append(format_attr_dict({"maskPattern": attrs.pop("maskPattern")}))
    text = op.name
    if op.ins or ins_items or op.in_types:
        inner = ", ".join(ins_items)
        if _syntax(op.name).attrs_in_ins and attrs:
            inner += f" {format_attr_dict(attrs)}"
            attrs = {}
        if op.in_types:
            inner += f" : {_types(op.in_types)}"
        text += f" ins({inner})"
    if op.outs or op.out_types:
        text += f" outs({_operands(op.outs)} : {_types(op.out_types)})"
    elif op.results and op.result_types:
        text += f" outs : {_types(op.result_types)}"
    if attrs:
        text += f" {format_attr_dict(attrs)}"
    for key, values in op.groups.items():
        text += f" {key} = {_operands(values)}"
        if key in op.group_types:
            text += f" : {_types(op.group_types[key])}"
    if op.result_types and not op.results:
        text += f" -> {_result_types(op.result_types)}"
    return text


def _arith(op: Op) -> str:
    name = op.name
    attrs = dict(op.attrs)
    if name == "arith.constant":
        value = attrs.pop("value", 0)
        ty = op.result_types[0] if op.result_types else None
        if isinstance(value, bool) and (ty is None or str(ty) == "i1"):
            return f"arith.constant {'true' if value else 'false'}" + _dict_suffix(attrs, ())
        dict_text = f"{format_attr_dict(attrs)} " if attrs else ""
        return f"arith.constant {dict_text}{_constant_value(value, ty)} : {ty}"
    text = name
    items = []
    if "predicate" in attrs and name in ("arith.cmpi", "arith.cmpf"):
        items.append(str(attrs.pop("predicate")))
    items.extend(_operand(v) for v in op.operands)
    text += " " + ", ".join(items)
    for key in [k for k, v in attrs.items() if isinstance(v, OpaqueAttr) and v.text.startswith(k + "<")]:
        text += f" {attrs.pop(key).text}"  # type: ignore[union-attr]
    if attrs:
        text += f" {format_attr_dict(attrs)}"
    text += f" : {_types(op.operand_types)}"
    if op.result_types and (
        name in ARITH_CAST_OPS
        or (
            name not in ("arith.cmpi", "arith.cmpf")
            and op.operand_types
            and op.result_types[0] != op.operand_types[-1]
        )
    ):
        text += f" to {op.result_types[0]}"
    return text


def _constant_value(value: Attr, ty: Type | None) -> str:
    float_format = _STYLE.get().float_format
    if float_format is not None and isinstance(value, float) and math.isfinite(value):
        return format(value, float_format)
    if isinstance(value, float) and not math.isfinite(value) and isinstance(ty, ScalarType):
        fmt = {"f32": ">f", "f64": ">d", "f16": ">e"}.get(ty.name)
        if fmt is not None:
            return "0x" + struct.pack(fmt, value).hex().upper()
        if ty.name == "bf16":
            return "0x" + struct.pack(">f", value)[:2].hex().upper()
    if isinstance(value, DenseAttr):
        return format_attr(value)
    return format_attr(value)


def _reinterpret_cast(op: Op) -> str:
    parts = []
    for key, values in op.groups.items():
        written = "offset" if key == "offsets" else key
        parts.append(f"{written}: [{_operands(values)}]")
    text = f"memref.reinterpret_cast {_operands(op.operands)} to {', '.join(parts)}"
    if op.attrs:
        text += f" {format_attr_dict(op.attrs)}"
    src = op.operand_types[0] if op.operand_types else ""
    dst = op.result_types[0] if op.result_types else ""
    return f"{text} : {src} to {dst}"


def _plain(op: Op) -> str:
    name = op.name
    syntax = _syntax(name)
    attrs = dict(op.attrs)
    text = name
    if syntax.form == "bracket" or "args" in attrs:
        args = attrs.pop("args", [])
        items = [format_attr(a) for a in (args if isinstance(args, list) else [args])]
        items += [_operand(v) for v in op.operands]
        text += f"[{', '.join(items)}]"
        return text + _dict_suffix(attrs, ())
    types_used = False
    if name == "pto.pointer_cast" and op.operands:
        # `pto.pointer_cast(%addr [: T]) %vr, %vc : memref<..>`
        typed = f" : {_types(op.operand_types)}" if op.operand_types else ""
        text += f"({_operand(op.operands[0])}{typed})"
        if op.operands[1:]:
            text += " " + _operands(op.operands[1:])
        types_used = True
    elif syntax.form == "paren" and (op.groups or op.operands):
        if syntax.attr_dict_first and attrs:
            text += f" {format_attr_dict(attrs)}"
            attrs = {}
        text += f"({_paren_items(op)})"
        types_used = True
        if attrs:
            text += f" {format_attr_dict(attrs)}"
            attrs = {}
    else:
        pieces = _plain_operands(op)
        groups = _plain_groups(op)
        sep = ", " if syntax.groups == "comma" else " "
        body = ", ".join(pieces)
        if groups:
            body = sep.join(([body] if body else []) + groups)
        if body:
            text += " " + body
        if attrs:
            text += f" {format_attr_dict(attrs)}"
            attrs = {}
    operand_types = [] if types_used else op.operand_types
    if name in RESULT_COLON_OPS and op.result_types and not operand_types:
        text += f" : {_types(op.result_types)}"
    else:
        if operand_types:
            text += f" : {_types(operand_types)}"
        if op.result_types:
            # always '->': a lone `: T` would read back as an operand type
            text += f" -> {_result_types(op.result_types)}"
    return text


def _plain_operands(op: Op) -> list[str]:
    ops = [_operand(v) for v in op.operands]
    form = _syntax(op.name).indexed
    if form is None or len(ops) <= form[0]:
        return ops
    base, count = form
    end = len(ops) if count is None else min(len(ops), base + 1 + count)
    head = ops[:base]
    indexed = f"{ops[base]}[{', '.join(ops[base + 1 : end])}]"
    return head + [indexed] + ops[end:]


def _plain_groups(op: Op) -> list[str]:
    out = []
    for key, values in op.groups.items():
        if key in _SCALAR_GROUPS and len(values) == 1:
            out.append(f"{key} = {_operand(values[0])}")
        elif _syntax(op.name).groups == "bare":
            out.append(f"{key} [{_operands(values)}]")
        else:
            out.append(f"{key} = [{_operands(values)}]")
    return out


def _paren_items(op: Op) -> str:
    items = []
    for key, values in op.groups.items():
        item = f"{key} = {_operands(values)}"
        if key in op.group_types:
            item += f" : {_types(op.group_types[key])}"
        items.append(item)
    if _syntax(op.name).operand_types == "each" and len(op.operand_types) == len(op.operands):
        items += [f"{_operand(v)} : {t}" for v, t in zip(op.operands, op.operand_types, strict=False)]
    elif op.operands:
        item = _operands(op.operands)
        if op.operand_types:
            item += f" : {_types(op.operand_types)}"
        items.append(item)
    return ", ".join(items)


def _print_for(op: Op, prefix: str, lines: list[str], depth: int) -> None:
    body = op.regions[0] if op.regions else Region()
    lb, ub, step, *inits = op.operands + [""] * max(0, 3 - len(op.operands))
    iv = body.args[0] if body.args else "%i"
    text = f"{prefix}scf.for {iv} = {_operand(lb)} to {_operand(ub)} step {_operand(step)}"
    if inits:
        pairs = ", ".join(f"{a} = {_operand(v)}" for a, v in zip(body.args[1:], inits, strict=False))
        text += f" iter_args({pairs}) -> ({_types(op.result_types)})"
    if body.arg_types and str(body.arg_types[0]) != "index":
        text += f" : {body.arg_types[0]}"
    lines.append(text + " {")
    _print_ops(body.ops, lines, depth + 1)
    lines.append(_INDENT * depth + "}")


def _print_while(op: Op, prefix: str, lines: list[str], depth: int) -> None:
    ind = _INDENT * depth
    before = op.regions[0] if op.regions else Region()
    after = op.regions[1] if len(op.regions) > 1 else Region()
    n = len(op.operands)
    pairs = ", ".join(f"{a} = {_operand(v)}" for a, v in zip(before.args, op.operands, strict=False))
    lines.append(
        f"{prefix}scf.while ({pairs}) : ({_types(before.arg_types[:n])}) -> ({_types(op.result_types)}) {{"
    )
    _print_ops(before.ops, lines, depth + 1)
    lines.append(ind + "} do {")
    _print_region_body(after, lines, depth + 1, label=True)
    lines.append(ind + "}")


def _print_generic(op: Op, prefix: str, lines: list[str], depth: int) -> None:
    text = f"{prefix}{format_string(op.name)}({_operands(op.operands)})"
    if op.attrs:
        text += f" <{format_attr_dict(op.attrs)}>"
    sig = f" : ({_types(op.operand_types)}) -> {_result_types(op.result_types, always_parens=True)}"
    if not op.regions:
        lines.append(text + sig)
        return
    ind = _INDENT * depth
    lines.append(text + " ({")
    for i, region in enumerate(op.regions):
        if i:
            lines.append(ind + "}, {")
        _print_region_body(region, lines, depth + 1, label=True)
    lines.append(ind + "})" + sig)


# ------------------------------------------------------------------------------------ small pieces


def format_results(results: list[str]) -> str:
    """``["%r#0", "%r#1"]`` -> ``%r:2``; anything else comma-joined."""
    if len(results) > 0 and all("#" in r for r in results):
        base = results[0].split("#", 1)[0]
        if results == [f"{base}#{i}" for i in range(len(results))]:
            return f"{base}:{len(results)}"
    return ", ".join(results)


def format_symbol(name: str) -> str:
    return f"@{name}" if _BARE_SYM.match(name) else f'@"{name}"'


def format_string(s: str) -> str:
    out = []
    for ch in s:
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\{ord(ch):02X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def format_attr_dict(attrs: dict[str, Attr]) -> str:
    items = []
    for key, value in attrs.items():
        k = key if _BARE_KEY.match(key) else format_string(key)
        items.append(k if isinstance(value, UnitAttr) else f"{k} = {format_attr(value)}")
    return "{" + ", ".join(items) + "}"


def format_attr(value: Attr) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _format_float(value)
    if isinstance(value, str):
        return format_string(value)
    if isinstance(value, EnumAttr):
        if not value.kind or value.kind in _STYLE.get().short_enum_kinds:
            return f"<{value.value}>"
        if value.kind in ENUM_KEYWORD_KINDS:
            return f"#pto<{value.kind} {value.value}>"
        return str(value)
    if isinstance(value, SymbolRef):
        return format_symbol(value.name)
    if isinstance(value, UnitAttr):
        return "unit"
    if isinstance(value, TypeAttr):
        return str(value.type)
    if isinstance(value, DenseAttr):
        vals = [_format_float(v) if isinstance(v, float) else str(v) for v in value.values]
        return f"dense<{vals[0]}>" if len(vals) == 1 else f"dense<[{', '.join(vals)}]>"
    if isinstance(value, OpaqueAttr):
        return value.text
    if isinstance(value, list):
        return "[" + ", ".join(format_attr(v) for v in value) + "]"
    raise TypeError(f"cannot print attribute {value!r}")


def _format_float(v: float) -> str:
    text = repr(v)
    if text in ("inf", "-inf", "nan"):
        return "0x" + struct.pack(">d", v).hex().upper()
    return text


def _dict_suffix(attrs: dict[str, Attr], skip: tuple[str, ...]) -> str:
    rest = {k: v for k, v in attrs.items() if k not in skip}
    return f" {format_attr_dict(rest)}" if rest else ""


def _operand(v: Operand) -> str:
    return str(v)


def _operands(values: list[Operand]) -> str:
    return ", ".join(str(v) for v in values)


def _types(types: list[Type]) -> str:
    return ", ".join(str(t) for t in types)


def _result_types(types: list[Type], always_parens: bool = False) -> str:
    if len(types) == 1 and not always_parens and not str(types[0]).startswith("("):
        return str(types[0])
    return f"({_types(types)})"


def _values_with_types(values: list[Operand], types: list[Type]) -> str:
    if not values:
        return ""
    text = " " + _operands(values)
    return text + (f" : {_types(types)}" if types else "")
