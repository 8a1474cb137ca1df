"""Lexer tests: token kinds, shapes glued to element types, literals, offsets and lexical errors."""

from __future__ import annotations

import pytest

from ptoisa.text.lexer import SourceMap, tokenize
from pyptoemu.errors import Loc, ParseError


def kinds(text: str) -> list[tuple[str, str]]:
    return [(t.kind, t.text) for t in tokenize(text)[:-1]]


def test_ssa_names_and_multi_result_uses():
    assert kinds("%0 %c32_1 %arg0 %a_chunk_0__tile_Left %r#1 %x.y") == [
        ("ssa", "%0"), ("ssa", "%c32_1"), ("ssa", "%arg0"), ("ssa", "%a_chunk_0__tile_Left"),
        ("ssa", "%r#1"), ("ssa", "%x.y"),
    ]


def test_result_count_is_separate_tokens():
    assert kinds("%r:2 =") == [("ssa", "%r"), (":", ":"), ("int", "2"), ("=", "=")]


@pytest.mark.parametrize("shape", ["16x128xf32", "?x?xbf16", "1x1x16x16x16xf32", "32xf32", "4xi16", "16x?xf8E4M3FN"])
def test_shapes_are_one_token(shape):
    assert kinds(shape) == [("shape", shape)]


def test_valid_pairs_without_element_type_split():
    assert kinds("16x?") == [("int", "16"), ("bare", "x"), ("?", "?")]
    assert kinds("?x16") == [("?", "?"), ("bare", "x16")]


@pytest.mark.parametrize(
    "text, kind",
    [
        ("1.0", "float"), ("1.000000e+00", "float"), ("8.83883476483184327e-02", "float"), ("-2.5e-01", "float"),
        ("1e5", "float"), ("-7", "int"), ("42", "int"), ("0xFF800000", "hex"), ('"a\\"b"', "str"),
    ],
)
def test_literals(text, kind):
    assert kinds(text) == [(kind, text)]


def test_symbols_attributes_types_and_punctuation():
    assert kinds("@f ^bb0 #pto.pipe #pto !pto.tile_buf -> [ ] { } < > , : = ? pto.tmatmul.acc") == [
        ("sym", "@f"), ("caret", "^bb0"), ("hash", "#pto.pipe"), ("hash", "#pto"), ("bang", "!pto.tile_buf"),
        ("->", "->"), ("[", "["), ("]", "]"), ("{", "{"), ("}", "}"), ("<", "<"), (">", ">"), (",", ","),
        (":", ":"), ("=", "="), ("?", "?"), ("bare", "pto.tmatmul.acc"),
    ]


def test_comments_and_whitespace_are_dropped():
    assert kinds("// RUN: x\n  %a // CHECK: y\n\n%b") == [("ssa", "%a"), ("ssa", "%b")]


def test_offsets_and_eof():
    toks = tokenize("ab  %c")
    assert [(t.start, t.end) for t in toks] == [(0, 2), (4, 6), (6, 6)]
    assert toks[-1].kind == "eof"


def test_source_map():
    sm = SourceMap("a\nbc\n\nd", "f.pto")
    assert sm.loc(0) == Loc("f.pto", 1, 1)
    assert sm.loc(3) == Loc("f.pto", 2, 2)
    assert sm.loc(6) == Loc("f.pto", 4, 1)


def test_lexical_errors_have_positions():
    with pytest.raises(ParseError, match="unterminated string") as info:
        tokenize('x\n  "abc\n', "f.pto")
    assert info.value.loc == Loc("f.pto", 2, 3)
    with pytest.raises(ParseError, match="unexpected character '\\$'") as info:
        tokenize("a $", "f.pto")
    assert str(info.value) == "f.pto:1:3: unexpected character '$'"
