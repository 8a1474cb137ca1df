"""Recursive-descent parser for `.pto` text into the typed AST of :mod:`ptoisa.text.ast`.

The parser knows the *syntax* of the format (shared/spec/pto-text-format.md §1-§4 and the §7
variants) and nothing of the ISA: any ``name ins(...) outs(...)`` parses as a DPS op, and any other
unknown op falls back to a permissive "plain" grammar (operands, bracket lists, ``key = [..]``
groups, attribute dicts, ``: types -> types``). Name resolution and operand-count checks per op
belong to later stages.

Method naming follows xDSL: ``parse_X`` raises when X is absent, ``parse_optional_X`` returns None
without consuming anything. Errors are :class:`ParseError` at ``file:line:col`` of the offending
token.
"""

from __future__ import annotations

import copy
import re
import struct
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from ptoisa.errors import InputError, Loc, ParseError
from ptoisa.text import tile_syntax
from ptoisa.text.ast import (
    Attr,
    BitPatternFloat,
    DenseAttr,
    EnumAttr,
    Function,
    MemRefType,
    Module,
    Op,
    OpaqueAttr,
    OpaqueType,
    Operand,
    PartitionViewType,
    PtrType,
    Region,
    ScalarType,
    SymbolRef,
    TensorViewType,
    TileBufType,
    Type,
    TypeAttr,
    UnitAttr,
)
from ptoisa.text.lexer import SourceMap, Token, tokenize

T = TypeVar("T")

# ------------------------------------------------------------------------------------ syntax tables

SCALAR_RE = re.compile(r"(?:index|[su]?i\d+|f\d+|bf16|tf32|f\d+E\d+M\d+\w*)\Z")
_SHAPE_RE = re.compile(r"((?:(?:\d+|\?)x)+)(.+)\Z")

# what an element type is written as where a user wrote another spelling (the spec's prose says
# "u8" and "fp32" where the text format has ui8 and f32: pto-text-format §2.1)
_ELEM_SPELLINGS = {**{f"u{n}": f"ui{n}" for n in (8, 16, 32, 64)}, **{f"fp{n}": f"f{n}" for n in (16, 32, 64)},
                   **{f"int{n}": f"i{n}" for n in (8, 16, 32, 64)}, **{f"uint{n}": f"ui{n}" for n in (8, 16, 32, 64)},
                   "bfloat16": "bf16", "half": "f16", "float": "f32"}


def _not_an_elem(name: str) -> str:
    """Why ``name`` is not an element type, with the spelling meant where there is one."""
    meant = _ELEM_SPELLINGS.get(name)
    hint = f" (did you mean {meant}?)" if meant else " (i8..i64, ui8..ui64, f16, bf16, f32, ...)"
    return f"'{name}' is not an element type{hint}"


TILE_LOCS = frozenset({"vec", "mat", "left", "right", "acc", "bias", "scaling"})
_TILE_KEYS = frozenset(
    {"loc", "dtype", "rows", "cols", "v_row", "v_col", "blayout", "slayout", "fractal", "pad", "compact"}
)
_COMPACT_KEYS = frozenset({"valid", "blayout", "slayout", "fractal", "pad", "compact"})
_PAD_NAMES = {"null": 0, "zero": 1, "max": 2, "min": 3}
_COMPACT_NAMES = {"null": 0, "normal": 1, "row_plus_one": 2}

# `#pto<NAME VALUE>` kinds (printed back in that form).
ENUM_KEYWORD_KINDS = frozenset(
    {
        "round_mode",
        "saturation_mode",
        "cmp",
        "st_phase",
        "atomic_type",
        "relu_pre_mode",
        "quant_type",
        "gather_oob",
        "scatter_atomic_op",
        "scatter_oob",
    }
)
_ADDRESS_SPACES = frozenset({"zero", "gm", "mat", "left", "right", "acc", "vec", "bias", "scaling"})
_OP_CLASSES = frozenset(
    {
        "TLOAD",
        "TSTORE_ACC",
        "TSTORE_VEC",
        "TMOV_M2L",
        "TMOV_M2S",
        "TMOV_M2B",
        "TMOV_M2V",
        "TMOV_V2M",
        "TMATMUL",
        "TVEC",
        "TVECWAIT_EVENT",
    }
)
# Handle types kept as OpaqueType; any other `!pto.X` is an error.
_PTO_OPAQUE_TYPES = frozenset(
    {"!pto.tile", "!pto.pipe", "!pto.async_session", "!pto.async_event", "!pto.eventid_array"}
)

# Ops whose `: T` (no arrow) names the result type rather than an operand type.
RESULT_COLON_OPS = frozenset({"pto.make_tensor_view", "pto.alloc_tile", "pto.pointer_cast", "memref.alloc"})
ARITH_CAST_OPS = frozenset(
    "arith." + n
    for n in ["index_cast", "index_castui", "extsi", "extui", "trunci", "sitofp", "uitofp", "fptosi", "fptoui", "extf", "truncf", "bitcast"]
)
_I1 = ScalarType("i1")
_INDEX = ScalarType("index")


def shorthand_kind(value: str, default: str = "") -> str:
    """Kind of a prefix-less ``<VALUE>`` attribute, read off the value (`PIPE_*` is a pipe...)."""
    if value.startswith(("PIPE_", "VIRTUAL_PIPE_")):
        return "pipe"
    if value.startswith("EVENT_ID"):
        return "event"
    if value in _OP_CLASSES:
        return "pipe_event_type"
    if value in _ADDRESS_SPACES:
        return "address_space"
    return default


def _is_op_name(tok: Token) -> bool:
    """True when ``tok`` can only start a new statement (``pto.x``, ``return``, ``call``...)."""
    return tok.kind == "bare" and ("." in tok.text or tok.text in ("return", "call"))


# ------------------------------------------------------------------------------------------ parser


class Parser:
    """One parse of one text; tokens are read with a cursor and one (occasionally two) lookahead."""

    def __init__(self, text: str, file: str = "<string>"):
        self.text = text
        self.file = file
        self.src = SourceMap(text, file)
        self.toks = tokenize(text, file)
        self.pos = 0
        self.tok = self.toks[0]
        # ops an op's reading put before it in its block (the comparisons of a desugared scf.index_switch)
        self.pending: list[Op] = []

    # ---- cursor helpers

    def loc(self, tok: Token | None = None) -> Loc:
        return self.src.loc((tok or self.tok).start)

    def advance(self) -> Token:
        tok = self.tok
        if tok.kind != "eof":
            self.pos += 1
            self.tok = self.toks[self.pos]
        return tok

    def peek(self, n: int = 1) -> Token:
        i = min(self.pos + n, len(self.toks) - 1)
        return self.toks[i]

    def at(self, kind: str, text: str | None = None) -> bool:
        tok = self.tok
        return tok.kind == kind and (text is None or tok.text == text)

    def at_kw(self, word: str) -> bool:
        return self.tok.kind == "bare" and self.tok.text == word

    def take(self, kind: str, text: str | None = None) -> Token | None:
        tok = self.tok  # at() and advance(), inline: the parser's most frequent call
        if tok.kind == kind and (text is None or tok.text == text):
            if kind != "eof":
                self.pos += 1
                self.tok = self.toks[self.pos]
            return tok
        return None

    def take_kw(self, word: str) -> Token | None:
        return self.take("bare", word)

    def error(self, message: str, tok: Token | None = None) -> ParseError:
        tok = tok or self.tok
        if tok.kind == "eof":
            message = f"unexpected end of file: {message}"
        return ParseError(message, self.loc(tok))

    def expect(self, kind: str, what: str, text: str | None = None) -> Token:
        tok = self.take(kind, text)
        if tok is None:
            raise self.error(f"expected {what}{self._found()}")
        return tok

    def expect_kw(self, word: str, what: str | None = None) -> Token:
        return self.expect("bare", what or f"'{word}'", word)

    def expect_parsed(self, fn: Callable[[], T | None], what: str) -> T:
        value = fn()
        if value is None:
            raise self.error(f"expected {what}{self._found()}")
        return value

    def _found(self) -> str:
        tok = self.tok
        return "" if tok.kind == "eof" else f", found '{tok.text}'"

    def close(self, closer: str, what: str) -> None:
        if self.take(closer) is None:
            raise self.error(f"expected '{closer}' to close {what}{self._found()}")

    def span_text(self, start: Token) -> str:
        """Source text from ``start`` to the end of the last consumed token."""
        return self.text[start.start : self.toks[self.pos - 1].end]

    # ---- module / function

    def parse_module(self) -> Module:
        """module ::= 'module' sym? ('attributes' attr-dict)? '{' function* '}' | function*"""
        if self.at_kw("module"):
            mod_tok = self.advance()
            self.take("sym")
            attrs: dict[str, Attr] = {}
            if self.take_kw("attributes"):
                attrs = self.parse_attr_dict()
            open_tok = self.expect("{", "'{' to open the module body")
            functions = []
            while not self.at("}"):
                if self.at("eof"):
                    raise self.error(f"expected '}}' to close the module opened at {self._lc(open_tok)}")
                functions.append(self.parse_function())
            self.advance()
            if not self.at("eof"):
                raise self.error(f"expected end of file after the module, found '{self.tok.text}'")
            return Module(self.file, functions, attrs, self.loc(mod_tok))
        functions = []
        while not self.at("eof"):
            functions.append(self.parse_function())
        return Module(self.file, functions)

    def _lc(self, tok: Token) -> str:
        loc = self.loc(tok)
        return f"{loc.line}:{loc.col}"

    def parse_function(self) -> Function:
        """function ::= 'func.func' 'private'? sym '(' (ssa ':' type attr-dict?)* ')' ('->' types)?
        ('attributes' attr-dict)? region"""
        tok = self.expect("bare", "'func.func'", "func.func")
        private = False
        if self.at("bare") and self.tok.text in ("private", "public", "nested"):
            private = self.advance().text == "private"
        name = self.expect("sym", "function name like @kernel").text[1:].strip('"')
        self.expect("(", "'(' to open the argument list")
        args: list[str] = []
        arg_types: list[Type] = []
        if not self.take(")"):
            while True:
                args.append(self.expect("ssa", "argument name like %arg0").text)
                self.expect(":", "':' after the argument name")
                arg_types.append(self.parse_type())
                if self.at("{"):
                    self.parse_attr_dict()  # argument attributes carry nothing the emulator uses
                if self.take(")"):
                    break
                if not self.take(","):
                    raise self.error(f"expected ',' or ')' in the argument list{self._found()}")
        result_types: list[Type] = []
        if self.take("->"):
            result_types = self.parse_result_type_list()
        attrs: dict[str, Attr] = {}
        if self.take_kw("attributes"):
            attrs = self.parse_attr_dict()
        body = self.parse_region()
        return Function(name, self.loc(tok), args, arg_types, result_types, attrs, body, private)

    # ---- regions and ops

    def parse_region(self) -> Region:
        """region ::= '{' (caret ('(' ssa ':' type, ... ')')? ':')? op* '}'"""
        open_tok = self.expect("{", "'{' to open a region")
        region = Region()
        if self.at("caret"):
            self._parse_block_label(region)
        while not self.at("}"):
            if self.at("eof"):
                raise self.error(f"expected '}}' to close the region opened at {self._lc(open_tok)}")
            if self.at("caret"):
                raise self.error("regions with more than one block are not supported")
            op = self.parse_op()
            if self.pending:
                region.ops.extend(self.pending)
                self.pending = []
            region.ops.append(op)
        self.advance()
        return region

    def _parse_block_label(self, region: Region) -> None:
        self.advance()
        if self.take("(") and not self.take(")"):
            while True:
                region.args.append(self.expect("ssa", "block argument like %x").text)
                self.expect(":", "':' after the block argument")
                region.arg_types.append(self.parse_type())
                if self.take(")"):
                    break
                if not self.take(","):
                    raise self.error(f"expected ',' or ')' in the block arguments{self._found()}")
        self.expect(":", "':' after the block label")

    def parse_optional_result_list(self) -> list[str] | None:
        """results ::= result (',' result)* '='  with  result ::= ssa (':' int)?"""
        if not self.at("ssa"):
            return None
        results: list[str] = []
        while True:
            name = self.expect("ssa", "result name like %0").text
            if self.take(":"):
                count_tok = self.expect("int", "result count after ':'")
                count = int(count_tok.text)
                if count < 1 or count > 4096:
                    raise self.error(f"invalid result count {count}", count_tok)
                results.extend(f"{name}#{i}" for i in range(count))
            else:
                results.append(name)
            if not self.take(","):
                break
        self.expect("=", "'=' after the result list")
        return results

    def starts_statement(self) -> bool:
        """At ``%a (: N)? (, %b (: N)?)* =`` i.e. the result list of the next op, not an operand."""
        i = self.pos
        toks = self.toks
        while True:
            if toks[i].kind != "ssa":
                return False
            i += 1
            if toks[i].kind == ":" and toks[i + 1].kind == "int":
                i += 2
            if toks[i].kind == "=":
                return True
            if toks[i].kind != ",":
                return False
            i += 1

    def parse_op(self) -> Op:
        first = self.tok
        results = self.parse_optional_result_list() or []
        if self.at("str"):
            op = self.parse_generic_op(first)
        else:
            name_tok = self.tok
            if name_tok.kind != "bare":
                raise self.error(f"expected an operation{self._found()}")
            self.advance()
            name = name_tok.text
            if name == "return":
                name = "func.return"
            elif name == "call":
                name = "func.call"
            op = Op(name, self.loc(first))
            self.parse_op_body(op)
        op.results = results
        if results and op.result_types and len(results) != len(op.result_types):
            raise ParseError(
                f"'{op.name}' defines {len(results)} result(s) but has {len(op.result_types)} result type(s)",
                op.loc,
            )
        return op

    def parse_op_body(self, op: Op) -> None:
        name = op.name
        if self.at_kw("ins") or self.at_kw("outs"):
            self.parse_dps(op)
            return
        handler = _HANDLERS.get(name)
        if handler is not None:
            handler(self, op)
        elif tile_syntax.is_tile_level_op(name):
            _tile_level_handler(name)(self, op)
        elif name.startswith("arith."):
            self.parse_arith(op)
        else:
            self.parse_plain(op)

    # ---- generic form

    def parse_generic_op(self, first: Token) -> Op:
        """generic ::= str '(' ssa* ')' ('<' attr-dict '>')? ('(' region* ')')? attr-dict? ':' fn-type"""
        name_tok = self.advance()
        op = Op(self._string_value(name_tok), self.loc(first), generic=True)
        self.expect("(", "'(' after the generic op name")
        if not self.take(")"):
            while True:
                op.operands.append(self.parse_operand())
                if self.take(")"):
                    break
                if not self.take(","):
                    raise self.error(f"expected ',' or ')' in the operand list{self._found()}")
        if self.take("<"):
            op.attrs.update(self.parse_attr_dict())
            self.close(">", "the properties '<{...}>'")
        if self.at("(") and self.peek().kind == "{":
            self.advance()
            while True:
                op.regions.append(self.parse_region())
                if self.take(")"):
                    break
                if not self.take(","):
                    raise self.error(f"expected ',' or ')' after a region{self._found()}")
        if self.at("{"):
            op.attrs.update(self.parse_attr_dict())
        self.expect(":", "':' and the function type of the generic op")
        op.operand_types, op.result_types = self.parse_function_type()
        return op

    def parse_function_type(self) -> tuple[list[Type], list[Type]]:
        """fn-type ::= '(' types ')' '->' (type | '(' types ')')"""
        self.expect("(", "'(' to open the operand types")
        ins = self._parse_types_until(")")
        self.expect("->", "'->' in the function type")
        return ins, self.parse_result_type_list()

    def _parse_types_until(self, closer: str) -> list[Type]:
        types: list[Type] = []
        if self.take(closer):
            return types
        while True:
            types.append(self.parse_type())
            if self.take(closer):
                return types
            if not self.take(","):
                raise self.error(f"expected ',' or '{closer}' in the type list{self._found()}")

    def parse_result_type_list(self) -> list[Type]:
        """types ::= '(' (type (',' type)*)? ')' | type"""
        if self.take("("):
            return self._parse_types_until(")")
        return [self.parse_type()]

    # ---- operands

    def parse_optional_operand(self) -> Operand | None:
        if self.at("ssa"):
            return self.advance().text
        if self.at("int"):
            return int(self.advance().text)
        return None

    def parse_operand(self) -> Operand:
        return self.expect_parsed(self.parse_optional_operand, "an SSA value like %0")

    def parse_operand_list(self, closer: str, what: str) -> list[Operand]:
        """'[' already consumed; operand (',' operand)* closer."""
        items: list[Operand] = []
        if self.take(closer):
            return items
        while True:
            items.append(self.parse_operand())
            if self.take(closer):
                return items
            if not self.take(","):
                raise self.error(f"expected ',' or '{closer}' to close {what}{self._found()}")

    def _type_follows(self) -> bool:
        """After a ',' inside a typed paren list: does a type (rather than a new operand) follow?"""
        tok = self.tok
        if tok.kind in ("ssa", "{", "str", "int", ")"):
            return False
        return not (tok.kind == "bare" and self.peek().kind == "=")

    def parse_paren_items(self, op: Op, what: str) -> tuple[list[Operand], list[Type]]:
        """items ::= '(' item (',' item)* ')' with interleaved ': types' runs.

        item ::= ssa ('[' operands ']')? attr-dict? | attr-dict | str | int | key '=' ssa (':' type)?
        Brace dicts merge into ``op.attrs``; a string becomes ``attrs["format"]``; keyed items go to
        ``op.groups[key]`` (and their type to ``op.group_types[key]``). Bracket operands
        (``%src[%r, %c]``) get an implicit ``index`` type when the text omits their types.
        """
        self.expect("(", f"'(' to open {what}")
        operands: list[Operand] = []
        types: list[Type] = []
        bracket_pos: list[int] = []
        if self.take(")"):
            return operands, types
        while True:
            self._parse_paren_item(op, what, operands, bracket_pos)
            if self.take(":"):
                self._parse_item_types(types)
            if self.take(")"):
                break
            if not self.take(","):
                if self.at("eof") or self.at("bare") or self.at("}"):
                    raise self.error(f"expected ')' to close {what}{self._found()}")
                raise self.error(f"expected ',' or ')' in {what}{self._found()}")
        if bracket_pos and len(types) == len(operands) - len(bracket_pos):
            for i in bracket_pos:
                types.insert(i, _INDEX)
        return operands, types

    def _parse_paren_item(self, op: Op, what: str, operands: list[Operand], bracket_pos: list[int]) -> None:
        """One item of a paren list (see :meth:`parse_paren_items`); bracket operands' positions
        are noted in ``bracket_pos``."""
        tok = self.tok
        if tok.kind == "ssa":
            operands.append(self.advance().text)
            if self.take("["):
                for extra in self.parse_operand_list("]", "the index list"):
                    bracket_pos.append(len(operands))
                    operands.append(extra)
            if self.at("{"):
                op.attrs.update(self.parse_attr_dict())
        elif tok.kind == "int":
            operands.append(int(self.advance().text))
        elif tok.kind == "{":
            op.attrs.update(self.parse_attr_dict())
        elif tok.kind == "str":
            op.attrs["format"] = self._string_value(self.advance())
        elif tok.kind == "bare" and self.peek().kind == "=":
            key = self.advance().text
            self.advance()
            op.groups[key] = [self.parse_operand()]
            if self.take(":"):
                op.group_types[key] = [self.parse_type()]
        else:
            raise self.error(f"expected an operand in {what}{self._found()}")

    def _parse_item_types(self, types: list[Type]) -> None:
        """':' consumed: a type, then more ', type' while a type (not a new operand) follows."""
        types.append(self.parse_type())
        while self.at(",") and self._peek_type_after_comma():
            self.advance()
            types.append(self.parse_type())

    def _peek_type_after_comma(self) -> bool:
        save = self.pos
        self.advance()
        result = self._type_follows()
        self.pos = save
        self.tok = self.toks[save]
        return result

    # ---- DPS tile ops

    def parse_dps(self, op: Op) -> None:
        """dps ::= ('ins' items)? ('outs' (items | ':' type))? trailing*

        trailing ::= attr-dict | key '=' (ssa (':' type)? | attr) | '->' types
        """
        op.is_dps = True
        if self.at_kw("ins"):
            ins_tok = self.advance()
            op.ins, op.in_types = self.parse_paren_items(op, "ins(...)")
            self._check_counts(op.ins, op.in_types, "ins", ins_tok)
        if self.at_kw("outs"):
            outs_tok = self.advance()
            if self.take(":"):
                op.result_types = [self.parse_type()]
            else:
                op.outs, op.out_types = self.parse_paren_items(op, "outs(...)")
                self._check_counts(op.outs, op.out_types, "outs", outs_tok)
        while True:
            if self.at("{"):
                op.attrs.update(self.parse_attr_dict())
            elif self.at("bare") and self.peek().kind == "=" and "." not in self.tok.text:
                key = self.advance().text
                self.advance()
                if self.at("ssa"):
                    op.groups[key] = [self.advance().text]
                    if self.take(":"):
                        op.group_types[key] = [self.parse_type()]
                else:
                    op.attrs[key] = self.parse_attr_value()
            elif self.take("->"):
                op.result_types = self.parse_result_type_list()
            else:
                return

    def _check_counts(self, operands: list[Operand], types: list[Type], what: str, tok: Token) -> None:
        if len(operands) != len(types):
            raise self.error(
                f"{what}(...) has {len(operands)} operand(s) but {len(types)} type(s)", tok
            )

    # ---- plain (fallback) grammar

    def parse_plain(self, op: Op) -> None:
        """plain ::= (ssa ('[' operands ']')? | '(' items ')' | '[' sync-items ']' | '<' enum '>'
        | '#attr' | int | key '='? ('[' operands ']' | ssa | attr) | attr-dict | region | ',')*
        (':' types ('->' types | 'to' types)?)? ('->' types)?

        Covers every small fixed grammar of §4 (alloc_tile, subset, treshape, tpush(...),
        reserve_buffer {...} -> i32, set_flag[...], ...) and unknown ops.
        """
        while True:
            kind = self.tok.kind
            if kind == ":":
                self.advance()
                self._parse_plain_colon_types(op)
                return
            if kind == "->":
                self.advance()
                op.result_types = self.parse_result_type_list()
                return
            if not self._parse_plain_item(op):
                return

    def _parse_plain_item(self, op: Op) -> bool:
        """One item of the plain grammar before its types; False at anything that ends the op."""
        tok = self.tok
        kind = tok.kind
        if kind == "ssa":
            if self.starts_statement():
                return False
            op.operands.append(self.advance().text)
            if self.take("["):
                op.operands.extend(self.parse_operand_list("]", "the index list"))
        elif kind == "int":
            op.operands.append(int(self.advance().text))
        elif kind == "(":
            self._parse_plain_paren(op, tok)
        elif kind == "[":
            self.advance()
            self._parse_sync_items(op)
        elif kind == "<" or kind == "hash":
            op.attrs.setdefault("args", [])
            args = op.attrs["args"]
            if isinstance(args, list):
                args.append(self.parse_attr_value())
        elif kind == "{":
            if self._region_follows(op):
                op.regions.append(self.parse_region())
            else:
                op.attrs.update(self.parse_attr_dict())
        elif kind == "bare" and "." not in tok.text and self.peek().kind in ("=", "["):
            self._parse_plain_keyed(op)
        elif kind == ",":
            self.advance()
        else:
            return False
        return True

    def _parse_plain_paren(self, op: Op, tok: Token) -> None:
        operands, types = self.parse_paren_items(op, f"the operands of '{op.name}'")
        op.operands.extend(operands)
        if types:
            if len(types) != len(operands):
                self._check_counts(operands, types, op.name, tok)
            op.operand_types.extend(types)

    def _parse_plain_keyed(self, op: Op) -> None:
        """key '='? ('[' operands ']' | ssa | int | attr)"""
        key = self.advance().text
        self.take("=")
        if self.take("["):
            op.groups[key] = self.parse_operand_list("]", f"'{key}' list")
        elif self.at("ssa") or self.at("int"):
            op.groups[key] = [self.parse_operand()]
        else:
            op.attrs[key] = self.parse_attr_value()

    def _parse_plain_colon_types(self, op: Op) -> None:
        """':' consumed: operand types then '->'/'to' result types, or one list whose role the op
        decides (result types for RESULT_COLON_OPS and operand-less ops)."""
        types = self._parse_type_list()
        if self.take("->") or self.take_kw("to"):
            op.operand_types.extend(types)
            op.result_types = self.parse_result_type_list()
        elif op.name in RESULT_COLON_OPS or not op.operands:
            op.result_types = types
        else:
            op.operand_types.extend(types)

    def _parse_type_list(self) -> list[Type]:
        types = [self.parse_type()]
        while self.take(","):
            types.append(self.parse_type())
        return types

    def _parse_sync_items(self, op: Op) -> None:
        """'[' consumed: (attr | ssa | int) list. Attributes and literal ints go to attrs["args"],
        SSA ids to operands."""
        args: list[Attr] = []
        if not self.take("]"):
            while True:
                if self.at("ssa"):
                    op.operands.append(self.advance().text)
                else:
                    args.append(self.parse_attr_value())
                if self.take("]"):
                    break
                if not self.take(","):
                    raise self.error(f"expected ',' or ']' to close the '[...]' list{self._found()}")
        op.attrs["args"] = args

    def _region_follows(self, op: Op) -> bool:
        """Tell a region ``{ op* }`` from an attribute dict ``{ key = v, unit }`` at a '{'."""
        if op.name.startswith("pto.section"):
            return True
        nxt = self.peek()
        if nxt.kind in ("ssa", "caret", "str"):
            return nxt.kind != "str" or self.peek(2).kind not in ("=", ",", "}")
        if nxt.kind == "bare":
            return self.peek(2).kind not in ("=", ",", "}")
        return False

    # ---- pto ops with a grammar of their own

    def parse_barrier(self, op: Op) -> None:
        """barrier ::= ('<' PIPE '>' | '#pto.pipe<' PIPE '>') attr-dict?"""
        op.attrs["pipe"] = self.parse_enum_attr("pipe")
        if self.at("{"):
            op.attrs.update(self.parse_attr_dict())

    def parse_sync_set_wait(self, op: Op) -> None:
        """sync ::= pipe-attr ',' (int | ssa) attr-dict?"""
        op.attrs["pipe"] = self.parse_enum_attr("pipe")
        self.expect(",", "',' before the signal id")
        if self.at("int"):
            op.attrs["id"] = int(self.advance().text)
        else:
            op.operands.append(self.expect("ssa", "signal id (an integer or an SSA value)").text)
        if self.at("{"):
            op.attrs.update(self.parse_attr_dict())

    def parse_enum_attr(self, default_kind: str) -> EnumAttr:
        tok = self.tok
        attr = self.parse_attr_value()
        if not isinstance(attr, EnumAttr):
            raise self.error(f"expected a {default_kind} attribute like <PIPE_V>", tok)
        return attr

    def parse_make_tensor_view(self, op: Op) -> None:
        self.parse_plain(op)
        shape = op.groups.get("shape")
        if shape is not None and op.result_types:
            op.result_types[0] = _tolerate_rank(op.result_types[0], len(shape))

    def parse_partition_view(self, op: Op) -> None:
        self.parse_plain(op)
        offsets = op.groups.get("offsets")
        if offsets is not None and op.operand_types:
            op.operand_types[0] = _tolerate_rank(op.operand_types[0], len(offsets))

    def parse_reinterpret_cast(self, op: Op) -> None:
        """'memref.reinterpret_cast' ssa 'to' ('offset' ':' list ',')? 'sizes' ':' list ','
        'strides' ':' list attr-dict? ':' type 'to' type"""
        op.operands.append(self.expect("ssa", "the source memref").text)
        self.expect_kw("to")
        while self.at("bare") and self.peek().kind == ":":
            key = self.advance().text
            self.advance()
            self.expect("[", f"'[' after '{key}:'")
            op.groups[{"offset": "offsets"}.get(key, key)] = self.parse_operand_list("]", f"'{key}'")
            self.take(",")
        if self.at("{"):
            op.attrs.update(self.parse_attr_dict())
        self.expect(":", "':' before the memref types")
        op.operand_types = [self.parse_type()]
        self.expect_kw("to")
        op.result_types = [self.parse_type()]

    # ---- func / scf

    def parse_return(self, op: Op) -> None:
        """return ::= (ssa (',' ssa)* ':' types)?"""
        self._parse_ssa_values_and_types(op)

    def _parse_ssa_values_and_types(self, op: Op) -> None:
        if self.at("ssa") and not self.starts_statement():
            op.operands.append(self.advance().text)
            while self.take(","):
                op.operands.append(self.expect("ssa", "an SSA value").text)
            self.expect(":", "':' and the types of the values")
            op.operand_types = self._parse_type_list()

    def parse_call(self, op: Op) -> None:
        """call ::= sym '(' ssa* ')' attr-dict? ':' fn-type"""
        op.attrs["callee"] = self.expect("sym", "callee like @f").text[1:].strip('"')
        self.expect("(", "'(' to open the call arguments")
        op.operands = self.parse_operand_list(")", "the call arguments")
        if self.at("{"):
            op.attrs.update(self.parse_attr_dict())
        self.expect(":", "':' and the callee signature")
        op.operand_types, op.result_types = self.parse_function_type()

    def parse_scf_for(self, op: Op) -> None:
        """for ::= ssa '=' ssa 'to' ssa 'step' ssa ('iter_args' '(' (ssa '=' ssa)* ')' '->' types)?
        (':' type)? region"""
        iv = self.expect("ssa", "loop variable like %i").text
        self.expect("=", "'=' after the loop variable")
        lb = self.parse_operand()
        self.expect_kw("to")
        ub = self.parse_operand()
        self.expect_kw("step")
        step = self.parse_operand()
        op.operands = [lb, ub, step]
        names: list[str] = []
        if self.take_kw("iter_args"):
            self.expect("(", "'(' after iter_args")
            if not self.take(")"):
                while True:
                    names.append(self.expect("ssa", "iter_arg name").text)
                    self.expect("=", "'=' after the iter_arg name")
                    op.operands.append(self.parse_operand())
                    if self.take(")"):
                        break
                    if not self.take(","):
                        raise self.error(f"expected ',' or ')' in iter_args{self._found()}")
            self.expect("->", "'->' and the iter_arg types")
            op.result_types = self.parse_result_type_list()
            if len(op.result_types) != len(names):
                raise self.error(f"iter_args has {len(names)} value(s) but {len(op.result_types)} type(s)")
        iv_type: Type = _INDEX
        if self.take(":"):
            iv_type = self.parse_type()
        body = self.parse_region()
        body.args = [iv, *names] + body.args
        body.arg_types = [iv_type, *op.result_types] + body.arg_types
        op.regions = [body]

    def parse_scf_if(self, op: Op) -> None:
        """if ::= ssa ('->' types)? region ('else' region)?"""
        op.operands = [self.expect("ssa", "the condition").text]
        if self.take("->"):
            op.result_types = self.parse_result_type_list()
        op.regions = [self.parse_region()]
        if self.take_kw("else"):
            op.regions.append(self.parse_region())

    def parse_scf_while(self, op: Op) -> None:
        """while ::= ('(' (ssa '=' ssa)* ')')? ':' fn-type region 'do' region"""
        names: list[str] = []
        if self.take("(") and not self.take(")"):
            while True:
                names.append(self.expect("ssa", "loop-carried name").text)
                self.expect("=", "'=' after the loop-carried name")
                op.operands.append(self.parse_operand())
                if self.take(")"):
                    break
                if not self.take(","):
                    raise self.error(f"expected ',' or ')' in the scf.while inits{self._found()}")
        self.expect(":", "':' and the scf.while signature")
        in_types, op.result_types = self.parse_function_type()
        if len(in_types) != len(names):
            raise self.error(f"scf.while binds {len(names)} value(s) but has {len(in_types)} type(s)")
        before = self.parse_region()
        before.args = names + before.args
        before.arg_types = in_types + before.arg_types
        self.expect_kw("do", "'do' before the scf.while body")
        op.regions = [before, self.parse_region()]

    def parse_scf_index_switch(self, op: Op) -> None:
        """index_switch ::= ssa ('->' types)? ('case' int region)* 'default' region

        Read as the chain of ``scf.if`` it means (spec §3.2: the assembler accepts it), so nothing
        after the parser needs to know the op: case ``v`` runs when the value equals ``v``, the first
        matching case wins, ``default`` runs when none does. The comparison of the outermost case goes
        before the op in its block (``self.pending``)."""
        value = self.expect("ssa", "the switch value").text
        types = self.parse_result_type_list() if self.take("->") else []
        cases: list[tuple[int, Region]] = []
        while self.take_kw("case"):
            cases.append((int(self.expect("int", "the case value").text), self.parse_region()))
        self.expect_kw("default", "'default' and its region to end scf.index_switch")
        chain = self.parse_region()
        tag = f"%index_switch.{op.loc.line}.{op.loc.col}"
        if not cases:  # only a default: it always runs
            cases, value = [(0, chain)], None
            chain = copy.deepcopy(chain)
        for k in range(len(cases) - 1, -1, -1):
            case, body = cases[k]
            test = self._switch_test(value, case, f"{tag}.case{k}", op.loc)
            branch = Op("scf.if", op.loc, operands=[test[-1].results[0]], result_types=list(types),
                        regions=[body, chain])
            if k == 0:
                self.pending = test
                op.name, op.operands, op.result_types, op.regions = branch.name, branch.operands, types, branch.regions
                return
            branch.results = [f"{tag}.case{k}.r{j}" for j in range(len(types))]
            done = Op("scf.yield", op.loc, operands=list(branch.results), operand_types=list(types))
            chain = Region(ops=[*test, branch, done])

    @staticmethod
    def _switch_test(value: str | None, case: int, name: str, loc: Loc) -> list[Op]:
        """``name`` = (value == case), or true when there is no value."""
        if value is None:
            return [Op("arith.constant", loc, results=[name], result_types=[_I1], attrs={"value": True})]
        const = Op("arith.constant", loc, results=[name + ".v"], result_types=[_INDEX], attrs={"value": case})
        return [const, Op("arith.cmpi", loc, results=[name], operands=[value, name + ".v"],
                          operand_types=[_INDEX], result_types=[_I1], attrs={"predicate": "eq"})]

    def parse_scf_execute_region(self, op: Op) -> None:
        """execute_region ::= ('->' types)? region

        Read as the ``scf.while`` that runs its body once (spec §3.2: the assembler accepts it): the
        body's ``scf.yield`` becomes ``scf.condition(false)`` with the same values, which leaves the
        loop with them as its results."""
        types = self.parse_result_type_list() if self.take("->") else []
        body = self.parse_region()
        last = body.ops[-1] if body.ops else None
        if last is not None and last.name == "scf.yield":
            body.ops.pop()
            values, value_types = list(last.operands), list(last.operand_types)
        elif not types:
            values, value_types = [], []
        else:
            raise ParseError(f"scf.execute_region returns {len(types)} value(s) but its body does not end with "
                             f"scf.yield", op.loc)
        stop = f"%execute_region.{op.loc.line}.{op.loc.col}.stop"
        body.ops.append(Op("arith.constant", op.loc, results=[stop], result_types=[_I1], attrs={"value": False}))
        body.ops.append(Op("scf.condition", op.loc, operands=[stop, *values],
                           operand_types=[_I1, *value_types] if value_types else []))
        after = Region(args=[f"{stop}.{j}" for j in range(len(types))], arg_types=list(types),
                       ops=[Op("scf.yield", op.loc)])
        op.name, op.result_types, op.regions = "scf.while", types, [body, after]

    def parse_scf_condition(self, op: Op) -> None:
        """condition ::= '(' ssa ')' (ssa (',' ssa)* ':' types)?"""
        self.expect("(", "'(' after scf.condition")
        op.operands.append(self.expect("ssa", "the condition").text)
        self.close(")", "scf.condition(...)")
        cond = op.operands
        self._parse_ssa_values_and_types(op)
        if op.operand_types:
            op.operand_types.insert(0, _I1)
        del cond

    # ---- arith

    def parse_arith(self, op: Op) -> None:
        """arith ::= pred? ssa (',' ssa)* attr-dict? (bare '<' .. '>')? ':' type (',' type)* ('to' type)?"""
        if op.name == "arith.constant":
            self.parse_constant(op)
            return
        if op.name in ("arith.cmpi", "arith.cmpf"):
            op.attrs["predicate"] = self.expect("bare", "comparison predicate like slt").text
            self.expect(",", "',' after the predicate")
        if not self.at(":"):
            op.operands.append(self.parse_operand())
            while self.take(","):
                op.operands.append(self.parse_operand())
        while not self.at(":"):
            if self.at("{"):
                op.attrs.update(self.parse_attr_dict())
            elif self.at("bare") and self.peek().kind == "<":
                start = self.tok
                key = self.advance().text
                self._skip_balanced()
                op.attrs[key] = OpaqueAttr(self.span_text(start))
            else:
                raise self.error(f"expected ':' and the operand type{self._found()}")
        self.advance()
        types = self._parse_type_list()
        op.operand_types = types
        if self.take_kw("to"):
            op.result_types = [self.parse_type()]
        elif op.name in ("arith.cmpi", "arith.cmpf"):
            op.result_types = [_I1]
        else:
            op.result_types = [types[-1]]

    def parse_constant(self, op: Op) -> None:
        """constant ::= attr-dict? (int | float | hex | 'true' | 'false' | dense) (':' type)?"""
        if self.at("{"):
            op.attrs.update(self.parse_attr_dict())
        tok = self.tok
        if tok.kind == "bare" and tok.text in ("true", "false"):
            self.advance()
            op.attrs["value"] = tok.text == "true"
            op.result_types = [self.parse_type() if self.take(":") else _I1]
            return
        if tok.kind in ("int", "float", "hex"):
            self.advance()
        elif tok.kind == "bare" and tok.text == "dense":
            op.attrs["value"] = self.parse_dense(typed=False)
        else:
            raise self.error(f"expected a constant value{self._found()}")
        self.expect(":", "':' and the constant's type")
        ty = self.parse_type()
        op.result_types = [ty]
        if tok.kind == "int":
            op.attrs["value"] = int(tok.text)
        elif tok.kind == "float":
            op.attrs["value"] = float(tok.text)
        elif tok.kind == "hex":
            op.attrs["value"] = _hex_value(int(tok.text, 16), ty)

    # ---- attributes

    def parse_attr_dict(self) -> dict[str, Attr]:
        """attr-dict ::= '{' (key ('=' attr)? (',' key ('=' attr)?)*)? '}'"""
        open_tok = self.expect("{", "'{' to open an attribute dict")
        attrs: dict[str, Attr] = {}
        if self.take("}"):
            return attrs
        while True:
            tok = self.tok
            if tok.kind == "bare":
                key = self.advance().text
            elif tok.kind == "str":
                key = self._string_value(self.advance())
            else:
                raise self.error(f"expected an attribute name{self._found()}")
            attrs[key] = self.parse_attr_value() if self.take("=") else UnitAttr()
            if self.take("}"):
                return attrs
            if not self.take(","):
                if self.at("eof"):
                    raise self.error(f"expected '}}' to close the attribute dict opened at {self._lc(open_tok)}")
                raise self.error(f"expected ',' or '}}' in the attribute dict{self._found()}")

    def parse_attr_value(self) -> Attr:
        tok = self.tok
        kind = tok.kind
        if kind in ("int", "float", "hex"):
            return self._parse_number_attr()
        if kind == "str":
            return self._string_value(self.advance())
        if kind == "sym":
            return SymbolRef(self.advance().text[1:].strip('"'))
        if kind == "hash":
            return self.parse_dialect_attr()
        if kind == "<":
            return self.parse_shorthand_enum("")
        if kind == "[":
            self.advance()
            return self._parse_attr_list()
        if kind == "{":
            start = self.tok
            entries = self.parse_attr_dict()
            return OpaqueAttr(self.span_text(start), tuple(entries.items()))
        if kind == "bare":
            return self._parse_bare_attr()
        if kind in ("bang", "shape"):
            return TypeAttr(self.parse_type())
        raise self.error(f"expected an attribute value{self._found()}")

    def _parse_number_attr(self) -> Attr:
        """int | float | hex, each with an optional ': type' (a hex literal's type fixes its value)."""
        tok = self.advance()
        ty = self._optional_colon_type()
        if tok.kind == "int":
            return int(tok.text)
        if tok.kind == "float":
            return float(tok.text)
        return _hex_value(int(tok.text, 16), ty)

    def _parse_attr_list(self) -> list[Attr]:
        """'[' consumed: (attr (',' attr)*)? ']'"""
        items: list[Attr] = []
        if self.take("]"):
            return items
        while True:
            items.append(self.parse_attr_value())
            if self.take("]"):
                return items
            if not self.take(","):
                raise self.error(f"expected ',' or ']' in the attribute list{self._found()}")

    def _parse_bare_attr(self) -> Attr:
        """A bare word: true/false, unit, dense<...>, an opaque NAME<...>, a type, or a keyword."""
        tok = self.tok
        text = tok.text
        if text in ("true", "false"):
            self.advance()
            self._optional_colon_type()
            return text == "true"
        if text == "unit":
            self.advance()
            return UnitAttr()
        if text == "dense":
            return self.parse_dense()
        if text == "array" or (self.peek().kind == "<" and text not in ("memref", "vector", "tensor")):
            self.advance()
            self._skip_balanced()
            return OpaqueAttr(self.span_text(tok))
        if SCALAR_RE.match(text) or text in ("memref", "vector", "tensor", "none"):
            return TypeAttr(self.parse_type())
        self.advance()
        return text

    def _optional_colon_type(self) -> Type | None:
        """Typed literal ``7 : i32``: the type is read and dropped (the op fixes it)."""
        if self.at(":") and self._type_start(self.peek()):
            self.advance()
            return self.parse_type()
        return None

    @staticmethod
    def _type_start(tok: Token) -> bool:
        return tok.kind == "bang" or (tok.kind == "bare" and bool(SCALAR_RE.match(tok.text))) or (
            tok.kind == "bare" and tok.text in ("memref", "vector", "tensor", "none")
        )

    def parse_dense(self, typed: bool = True) -> DenseAttr:
        """dense ::= 'dense' '<' (number | '[' ... ']') '>' (':' type)?"""
        self.advance()
        self.expect("<", "'<' after dense")
        values: list[int | float] = []
        self._parse_dense_values(values)
        self.close(">", "dense<...>")
        if typed:
            self._optional_colon_type()
        return DenseAttr(tuple(values))

    def _parse_dense_values(self, values: list[int | float]) -> None:
        tok = self.tok
        if self.take("["):
            if self.take("]"):
                return
            while True:
                self._parse_dense_values(values)
                if self.take("]"):
                    return
                if not self.take(","):
                    raise self.error(f"expected ',' or ']' in dense<...>{self._found()}")
        elif tok.kind == "int" or tok.kind == "hex":
            values.append(int(self.advance().text, 0))
        elif tok.kind == "float":
            values.append(float(self.advance().text))
        elif tok.kind == "bare" and tok.text in ("true", "false"):
            values.append(int(self.advance().text == "true"))
        else:
            raise self.error(f"expected a number in dense<...>{self._found()}")

    def parse_dialect_attr(self) -> Attr:
        """#pto.NAME<VALUE> | #pto<NAME VALUE> | #pto.tile_buf_config<k = v, ...> | #other..."""
        tok = self.advance()
        text = tok.text
        if text == "#pto" and self.at("<"):
            self.advance()
            kind = self.expect("bare", "attribute kind like round_mode").text
            value = self.expect("bare", f"a {kind} value").text
            self.close(">", f"#pto<{kind} ...>")
            return EnumAttr(kind, value)
        if text.startswith("#pto.") and self.at("<"):
            kind = text[5:]
            if kind == "sync_op_type":
                kind = "pipe_event_type"
            if kind == "tile_buf_config":
                return self._parse_config_attr(tok)
            nxt = self.peek()
            if nxt.kind in ("bare", "int", "str") and self.peek(2).kind == ">":
                self.advance()
                value = self.advance()
                self.advance()
                val = self._string_value(value) if value.kind == "str" else value.text
                return EnumAttr(kind, val)
            self._skip_balanced()
            return OpaqueAttr(self.span_text(tok))
        if self.at("<"):
            self._skip_balanced()
        return OpaqueAttr(self.span_text(tok))

    def _parse_config_attr(self, start: Token) -> OpaqueAttr:
        self.advance()
        entries: list[tuple[str, Attr]] = []
        if not self.take(">"):
            while True:
                key = self.expect("bare", "a tile_buf_config key").text
                self.expect("=", f"'=' after '{key}'")
                entries.append((key, self.parse_attr_value()))
                if self.take(">"):
                    break
                if not self.take(","):
                    raise self.error(f"expected ',' or '>' in #pto.tile_buf_config{self._found()}")
        return OpaqueAttr(self.span_text(start), tuple(entries))

    def parse_shorthand_enum(self, default_kind: str) -> EnumAttr:
        """'<' VALUE '>' with the kind implied by the value (`<PIPE_V>`, `<EVENT_ID0>`, `<vec>`)."""
        self.expect("<", "'<'")
        value = self.expect("bare", "an enum value like PIPE_V").text
        self.close(">", f"<{value}")
        return EnumAttr(shorthand_kind(value, default_kind), value)

    def _skip_balanced(self) -> None:
        """Skip one balanced ``<...>`` (nested brackets of any kind allowed)."""
        open_tok = self.expect("<", "'<'")
        depth = 1
        pairs = {"<": ">", "(": ")", "[": "]", "{": "}"}
        stack = [">"]
        while depth:
            tok = self.advance()
            if tok.kind == "eof":
                raise self.error(f"expected '>' to close the '<' at {self._lc(open_tok)}", tok)
            if tok.kind in pairs:
                stack.append(pairs[tok.kind])
                depth += 1
            elif tok.kind in (">", ")", "]", "}"):
                if tok.kind != stack[-1]:
                    raise self.error(f"unbalanced '{tok.kind}'", tok)
                stack.pop()
                depth -= 1

    def _string_value(self, tok: Token) -> str:
        body = tok.text[1:-1]
        if "\\" not in body:
            return body
        return re.sub(r"\\([0-9a-fA-F]{2}|.)", _unescape, body)

    # ---- types

    def parse_type(self) -> Type:
        ty = self.parse_optional_type()
        if ty is None:
            after = " after ':'" if self.pos and self.toks[self.pos - 1].kind == ":" else ""
            raise self.error(f"expected type{after}{self._found()}")
        return ty

    def parse_optional_type(self) -> Type | None:
        tok = self.tok
        kind = tok.kind
        if kind == "bare":
            text = tok.text
            if SCALAR_RE.match(text):
                self.advance()
                return ScalarType(text)
            if text == "memref" and self.peek().kind == "<":
                return self.parse_memref_type()
            if text in _TILE_LEVEL_TYPES and self.peek().kind == "<":
                return _TILE_LEVEL_TYPES[text](self)
            if text in ("vector", "tensor", "complex", "tuple") and self.peek().kind == "<":
                self.advance()
                self._skip_balanced()
                return OpaqueType(self.span_text(tok))
            if text == "none":
                self.advance()
                return OpaqueType(text)
            return None
        if kind == "bang":
            return self.parse_bang_type()
        if kind == "<":
            return self.parse_short_type()
        if kind == "(":
            # a function type used as a type (rare): keep the text
            self.advance()
            self._parse_types_until(")")
            self.expect("->", "'->' in the function type")
            self.parse_result_type_list()
            return OpaqueType(self.span_text(tok))
        return None

    def parse_bang_type(self) -> Type:
        tok = self.advance()
        name = tok.text
        if name == "!pto.ptr":
            self.expect("<", "'<' after !pto.ptr")
            elem = self._parse_elem_name()
            self.close(">", "!pto.ptr<...> (it takes exactly one element type)")
            return PtrType(elem)
        if name == "!pto.tensor_view":
            self.expect("<", "'<' after !pto.tensor_view")
            shape, elem = self._parse_shape()
            self.close(">", "!pto.tensor_view<...>")
            return TensorViewType(shape, elem)
        if name in ("!pto.partition_tensor_view", "!pto.tile_view"):
            self.expect("<", f"'<' after {name}")
            shape, elem = self._parse_shape()
            self.close(">", f"{name}<...>")
            return PartitionViewType(shape, elem)
        if name in _TILE_LEVEL_TYPES:
            self.pos -= 1
            self.tok = tok
            return _TILE_LEVEL_TYPES[name](self)
        if name == "!pto.tile_buf":
            self.expect("<", "'<' after !pto.tile_buf")
            return self.parse_tile_buf_body(tok)
        if name in _PTO_OPAQUE_TYPES or not name.startswith("!pto."):
            if self.at("<"):
                self._skip_balanced()
            return OpaqueType(self.span_text(tok))
        raise self.error(f"unknown type '{name}'", tok)

    def parse_short_type(self) -> Type:
        """Prefix-less ``<...>``: a tile_buf if it holds ``loc=`` or starts with a location, else a ptr."""
        start = self.advance()
        nxt = self.peek()
        if self.at("bare") and (
            (self.tok.text == "loc" and nxt.kind == "=") or (self.tok.text in TILE_LOCS and nxt.kind == ",")
        ):
            return self.parse_tile_buf_body(start)
        elem = self._parse_elem_name()
        self.close(">", "the short pointer type '<T>'")
        return PtrType(elem)

    def _parse_elem_name(self) -> str:
        tok = self.tok
        if tok.kind == "bare" and SCALAR_RE.match(tok.text):
            return self.advance().text
        if tok.kind == "bare" and re.match(r"[a-z]+\d+\Z", tok.text):
            raise self.error(f"expected an element type like f32: {_not_an_elem(tok.text)}")
        raise self.error(f"expected an element type like f32{self._found()}")

    def _parse_shape(self) -> tuple[tuple[int | None, ...], str]:
        """shape ::= (dim 'x')* elem with dim ::= int | '?' (lexed as one ``shape`` token)."""
        tok = self.tok
        if tok.kind == "bare" and SCALAR_RE.match(tok.text):
            return (), self.advance().text
        if tok.kind != "shape":
            raise self.error(f"expected a shape like 16x64xf32{self._found()}")
        m = _SHAPE_RE.match(tok.text)
        if m is None:
            raise self.error(f"invalid shape '{tok.text}'")
        if not SCALAR_RE.match(m.group(2)):
            raise self.error(f"invalid shape '{tok.text}': {_not_an_elem(m.group(2))}")
        self.advance()
        dims = tuple(None if d == "?" else int(d) for d in m.group(1)[:-1].split("x"))
        return dims, m.group(2)

    def parse_memref_type(self) -> MemRefType:
        """memref ::= 'memref' '<' shape (',' strided<[..], offset: o> | ',' #pto.address_space<X>)* '>'"""
        self.advance()
        self.expect("<", "'<' after memref")
        shape, elem = self._parse_shape()
        space = "gm"
        strides: tuple[int | None, ...] | None = None
        offset: int | None = None
        while self.take(","):
            if self.at_kw("strided"):
                strides, offset = self._parse_strided()
            elif self.at("hash"):
                attr = self.parse_attr_value()
                if not isinstance(attr, EnumAttr):
                    raise self.error("expected #pto.address_space<...> in the memref type")
                space = attr.value
            elif self.at("int"):
                space = self.advance().text
            else:
                raise self.error(f"expected strided<...> or an address space in memref<...>{self._found()}")
        self.close(">", "memref<...>")
        return MemRefType(shape, elem, space, strides, offset)

    def _parse_strided(self) -> tuple[tuple[int | None, ...], int | None]:
        self.advance()
        self.expect("<", "'<' after strided")
        self.expect("[", "'[' to open the strides")
        strides = []
        if not self.take("]"):
            while True:
                strides.append(self._parse_dim())
                if self.take("]"):
                    break
                self.expect(",", "',' or ']' in the strides")
        offset: int | None = 0
        if self.take(","):
            self.expect_kw("offset")
            self.expect(":", "':' after offset")
            if self.take("["):  # legacy `offset: [?, ?]`
                while not self.take("]"):
                    self._parse_dim()
                    self.take(",")
                offset = None
            else:
                offset = self._parse_dim()
        self.close(">", "strided<...>")
        return tuple(strides), offset

    def _parse_dim(self) -> int | None:
        if self.take("?"):
            return None
        tok = self.expect("int", "an integer or '?'")
        value = int(tok.text)
        return None if value < 0 else value

    def parse_tile_buf_body(self, start: Token) -> TileBufType:
        """'<' consumed. Verbose ``k=v, ...``, compact ``LOC, RxCxT, k=v...`` or legacy ``RxCxT, space``."""
        if self.at("shape"):
            return self._parse_legacy_tile_buf()
        fields: dict[str, object] = {}
        if self.at("bare") and self.tok.text in TILE_LOCS and self.peek().kind == ",":
            fields["loc"] = self.advance().text
            self.advance()
            (rows, cols), dtype = self._parse_tile_shape()
            fields.update(rows=rows, cols=cols, dtype=dtype)
            allowed = _COMPACT_KEYS
            if not self.take(","):
                self.close(">", "!pto.tile_buf<...>")
                return self._make_tile_buf(fields, start)
        else:
            allowed = _TILE_KEYS
        seen: set[str] = set()
        while True:
            key_tok = self.expect("bare", "a tile_buf key like rows")
            key = key_tok.text
            if key not in allowed:
                raise self.error(f"unknown tile_buf key '{key}'", key_tok)
            if key in seen:
                raise self.error(f"duplicate tile_buf key '{key}'", key_tok)
            seen.add(key)
            self.expect("=", f"'=' after '{key}'")
            self._parse_tile_value(key, fields)
            if self.take(">"):
                return self._make_tile_buf(fields, start)
            if not self.take(","):
                raise self.error(f"expected ',' or '>' in !pto.tile_buf<...>{self._found()}")

    def _parse_tile_shape(self) -> tuple[tuple[int, int], str]:
        shape, dtype = self._parse_shape()
        if len(shape) != 2 or None in shape:
            raise self.error("expected a static 2-D tile shape like 16x64xf32")
        return (shape[0], shape[1]), dtype  # type: ignore[return-value]

    def _parse_tile_value(self, key: str, fields: dict[str, object]) -> None:
        tok = self.tok
        if key == "loc":
            fields[key] = self.expect("bare", "a tile location like vec").text
        elif key == "dtype":
            fields[key] = self._parse_elem_name()
        elif key in ("rows", "cols", "fractal"):
            fields[key] = int(self.expect("int", f"an integer for '{key}'").text)
        elif key in ("v_row", "v_col"):
            fields[key] = self._parse_dim()
        elif key in ("blayout", "slayout"):
            if tok.kind == "str":
                fields[key] = self._string_value(self.advance())
            elif tok.kind == "hash":
                attr = self.parse_attr_value()
                fields[key] = attr.value if isinstance(attr, EnumAttr) else str(attr)
            else:
                fields[key] = self.expect("bare", f"a layout for '{key}'").text
        elif key in ("pad", "compact"):
            names = _PAD_NAMES if key == "pad" else _COMPACT_NAMES
            if tok.kind == "int":
                fields[key] = int(self.advance().text)
            elif tok.kind == "bare" and tok.text in names:
                fields[key] = names[self.advance().text]
            else:
                raise self.error(f"expected an integer for '{key}'{self._found()}")
        elif key == "valid":
            fields["v_row"] = self._parse_dim()
            x = self.tok
            if x.kind != "bare" or not re.fullmatch(r"x\d*", x.text):
                raise self.error(f"expected 'x' in valid=RxC{self._found()}")
            self.advance()
            fields["v_col"] = int(x.text[1:]) if len(x.text) > 1 else self._parse_dim()

    def _make_tile_buf(self, fields: dict[str, object], start: Token) -> TileBufType:
        for key in ("loc", "dtype", "rows", "cols"):
            if key not in fields:
                raise self.error(f"!pto.tile_buf is missing '{key}'", start)
        rows = fields["rows"]
        cols = fields["cols"]
        return TileBufType(
            loc=str(fields["loc"]),
            dtype=str(fields["dtype"]),
            rows=rows,  # type: ignore[arg-type]
            cols=cols,  # type: ignore[arg-type]
            v_row=fields.get("v_row", rows),  # type: ignore[arg-type]
            v_col=fields.get("v_col", cols),  # type: ignore[arg-type]
            blayout=str(fields.get("blayout", "row_major")),
            slayout=str(fields.get("slayout", "none_box")),
            fractal=fields.get("fractal", 512),  # type: ignore[arg-type]
            pad=fields.get("pad", 0),  # type: ignore[arg-type]
            compact=fields.get("compact", 0),  # type: ignore[arg-type]
        )

    def _parse_legacy_tile_buf(self) -> TileBufType:
        """``32x64xf32, #pto.address_space<vec>`` (memref-like, §2.5 legacy)."""
        shape, dtype = self._parse_shape()
        if None in shape or not shape:
            raise self.error("expected a static tile shape in the legacy tile_buf form")
        cols = shape[-1] or 0
        rows = 1
        for d in shape[:-1]:
            rows *= d or 0
        loc = "vec"
        while self.take(","):
            if self.at_kw("strided"):
                self._parse_strided()
            else:
                attr = self.parse_attr_value()
                if isinstance(attr, EnumAttr):
                    loc = attr.value
        self.close(">", "!pto.tile_buf<...>")
        return TileBufType(loc, dtype, rows, cols, rows, cols)


def _tolerate_rank(ty: Type, n: int) -> Type:
    """§2.3 legacy rule: ``tensor_view<2xf32>`` with 2 shape operands means rank 2, all dynamic."""
    if isinstance(ty, TensorViewType) and len(ty.shape) != n and len(ty.shape) == 1 and ty.shape[0] == n:
        return TensorViewType((None,) * n, ty.elem)
    return ty


def _hex_value(bits: int, ty: Type | None) -> int | float:
    """MLIR writes special floats as bit patterns (``0xFF800000 : f32`` is -inf)."""
    name = ty.name if isinstance(ty, ScalarType) else ""
    try:
        if name == "f32":
            return BitPatternFloat(struct.unpack(">f", (bits & 0xFFFFFFFF).to_bytes(4, "big"))[0])
        if name == "f64":
            return BitPatternFloat(struct.unpack(">d", (bits & (2**64 - 1)).to_bytes(8, "big"))[0])
        if name == "f16":
            return BitPatternFloat(struct.unpack(">e", (bits & 0xFFFF).to_bytes(2, "big"))[0])
        if name == "bf16":
            return BitPatternFloat(struct.unpack(">f", ((bits & 0xFFFF) << 16).to_bytes(4, "big"))[0])
    except (OverflowError, struct.error):
        return bits
    return bits


def _unescape(m: re.Match[str]) -> str:
    s = m.group(1)
    if len(s) == 2:
        return chr(int(s, 16))
    return {"n": "\n", "t": "\t"}.get(s, s)


_HANDLERS: dict[str, Callable[[Parser, Op], None]] = {
    "func.return": Parser.parse_return,
    "func.call": Parser.parse_call,
    "scf.for": Parser.parse_scf_for,
    "scf.if": Parser.parse_scf_if,
    "scf.while": Parser.parse_scf_while,
    "scf.index_switch": Parser.parse_scf_index_switch,
    "scf.execute_region": Parser.parse_scf_execute_region,
    "scf.yield": Parser.parse_return,
    "scf.condition": Parser.parse_scf_condition,
    "memref.reinterpret_cast": Parser.parse_reinterpret_cast,
    "pto.barrier": Parser.parse_barrier,
    "pto.sync.set": Parser.parse_sync_set_wait,
    "pto.sync.wait": Parser.parse_sync_set_wait,
    "pto.make_tensor_view": Parser.parse_make_tensor_view,
    "pto.partition_view": Parser.parse_partition_view,
    "pto.subview": Parser.parse_partition_view,
}

# The tile-level SSA form (seed 002) lives in its own module; these route to it.
_TILE_LEVEL_TYPES: dict[str, Callable[[Parser], Type]] = {
    "tile": tile_syntax.parse_tile_type,
    "!pto.tile": tile_syntax.parse_tile_type,
    "pto.memref": tile_syntax.parse_memref_type,
    "!pto.memref": tile_syntax.parse_memref_type,
    "!pto.event": tile_syntax.parse_event_type,
}


def _tile_level_handler(name: str) -> Callable[[Parser, Op], None]:
    if name == tile_syntax.SUBVIEW:
        return tile_syntax.parse_subview
    if name in tile_syntax.SCALAR_OPS:
        return tile_syntax.parse_scalar_op
    return tile_syntax.parse_tile_op


# ---------------------------------------------------------------------------------------- public API


# A resource limit of the emulator, not of the format: the largest real kernels are a few hundred KiB.
MAX_SOURCE_BYTES = 16 * 2**20


def parse_module(text: str, file: str = "<string>") -> Module:
    """Parse `.pto` text into a :class:`Module`; raises :class:`ParseError` with ``file:line:col``."""
    text = text.removeprefix("\ufeff")  # a UTF-8 byte order mark
    parser = Parser(text, file)
    try:
        return parser.parse_module()
    except RecursionError:
        raise parser.error("input is nested too deeply") from None


def parse_file(path: str | Path) -> Module:
    """Read and parse a `.pto` file; a missing or unreadable file is an :class:`InputError`."""
    return parse_module(read_source(path), str(Path(path)))


def read_source(path: str | Path) -> str:
    """The text of a `.pto` file, as :func:`parse_file` reads it (a missing or unreadable file is an
    :class:`InputError`, a file over :data:`MAX_SOURCE_BYTES` too, bytes that are not UTF-8 a
    located :class:`ParseError`); parse it with ``parse_module(text, str(Path(path)))``."""
    p = Path(path)
    try:
        size = p.stat().st_size
        if size > MAX_SOURCE_BYTES:
            raise InputError(f"'{p}' is {size} bytes; the emulator reads `.pto` files of at most "
                             f"{MAX_SOURCE_BYTES // 2**20} MiB", Loc(str(p), 1, 1))
        data = p.read_bytes()
    except FileNotFoundError:
        raise InputError(f"cannot read '{p}': no such file") from None
    except OSError as exc:
        raise InputError(f"cannot read '{p}': {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8-sig")  # a UTF-8 byte order mark is accepted
    except UnicodeDecodeError as exc:
        start = exc.start + (3 if data.startswith(b"\xef\xbb\xbf") else 0)
        line_start = data.rfind(b"\n", 0, start) + 1
        line = data.count(b"\n", 0, start) + 1
        col = len(data[line_start:start].decode("utf-8", errors="replace")) + 1
        raise ParseError(f"the file is not UTF-8: byte 0x{data[start]:02x} cannot be decoded",
                         Loc(str(p), line, col)) from None
    return text
