"""Tokenizer for the `.pto` text format (MLIR textual IR subset).

One compiled regex walks the text once (each match skips the whitespace and comments before its
token, so they cost no match of their own). Tokens carry only their kind, text and start offset: line and
column are computed from the offset when something needs them (an error, or an op's ``Loc``), so the
common path does no line bookkeeping.

Token kinds: ``ssa`` (``%x``, ``%r#1``), ``sym`` (``@f``), ``caret`` (``^bb0``), ``hash`` (``#pto.pipe``),
``bang`` (``!pto.tile_buf``), ``shape`` (``16x64xf32``: dims glued to an element type), ``int``,
``hex``, ``float``, ``str``, ``bare`` (identifiers and keywords, dots allowed: ``pto.tadd``), ``eof``,
and punctuation whose kind is its own text (``(``, ``->``, ``=``, ...).
"""

from __future__ import annotations

import bisect
import re

from ptoisa.errors import Loc, ParseError

# Alternatives are tried in order: the frequent ones first where no earlier one could take their
# text (identifiers, then punctuation but ``?``, which may start a shape like ``?x16xf32``).
_TOKEN_RE = re.compile(
    r"""
    (?:\s+|//[^\n]*)*  # whitespace and comments before the token: skipped by the same match
    (?:
    (?P<bare>[A-Za-z_][\w$.]*)
  | (?P<punct>[()\[\]{}<>,:=*+|])
  | (?P<ssa>%(?:\d+|[A-Za-z_$.][\w$.\-]*)(?:\#\d+)?)
  | (?P<bang>![A-Za-z_][\w$.]*)
  | (?P<str>"(?:[^"\\\n]|\\.)*")
  | (?P<badstr>")
  | (?P<sym>@(?:[A-Za-z_$.][\w$.\-]*|"[^"\n]*"))
  | (?P<caret>\^[\w$.\-]+)
  | (?P<hash>\#[A-Za-z_][\w$.]*)
  | (?P<hex>-?0x[0-9a-fA-F]+(?![\w.]))
  | (?P<shape>(?:(?:\d+|\?)x)+[A-Za-z_][\w$.]*)
  | (?P<float>-?(?:\d+\.\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+))
  | (?P<int>-?\d+)
  | (?P<arrow>->)
  | (?P<question>\?)
  | (?P<end>\Z)
  | (?P<bad>.)
    )
    """,
    re.VERBOSE | re.DOTALL,
)


# No type of the format needs more: a 128-bit integer has 39 digits, and the longest exact decimal
# spelling of a double is under 800 characters. Longer literals are typos or abuse (Python's int()
# refuses 4300+ digits with a ValueError).
MAX_NUMBER_CHARS = 800


class Token:
    """One token: ``kind`` (see module docstring), its source ``text`` and ``start`` offset."""

    __slots__ = ("kind", "start", "text")

    def __init__(self, kind: str, text: str, start: int):
        self.kind = kind
        self.text = text
        self.start = start

    @property
    def end(self) -> int:
        return self.start + len(self.text)

    def __repr__(self) -> str:
        return f"Token({self.kind!r}, {self.text!r}, {self.start})"


class SourceMap:
    """Turns offsets into 1-based (line, col); built once per file, queried with a bisect."""

    def __init__(self, text: str, file: str):
        self.file = file
        self._line_starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def loc(self, offset: int) -> Loc:
        line = bisect.bisect_right(self._line_starts, offset)
        return Loc(self.file, line, offset - self._line_starts[line - 1] + 1)


def tokenize(text: str, file: str = "<string>") -> list[Token]:
    """Split ``text`` into tokens (whitespace and ``//`` comments dropped), ending with an ``eof`` token.

    Raises ParseError at the first character that cannot start a token and at unterminated strings.
    """
    tokens: list[Token] = []
    append = tokens.append
    for m in _TOKEN_RE.finditer(text):
        kind = m.lastgroup  # never None: every match ends in a token, the end, or ``bad`` (any character)
        if kind == "end":  # whitespace and comments up to the end of the text
            break
        start = m.start(kind)
        if kind == "punct" or kind == "arrow" or kind == "question":
            s = m.group(kind)
            append(Token(s, s, start))
        elif kind == "badstr":
            raise ParseError("unterminated string literal", SourceMap(text, file).loc(start))
        elif kind == "bad":
            ch = m.group(kind)
            raise ParseError(f"unexpected character {ch!r}", SourceMap(text, file).loc(start))
        else:
            text_ = m.group(kind)
            if kind in ("int", "hex", "float", "shape") and len(text_) > MAX_NUMBER_CHARS:
                raise ParseError(f"numeric literal of {len(text_)} characters is out of range for every type "
                                 f"(at most {MAX_NUMBER_CHARS})", SourceMap(text, file).loc(start))
            append(Token(kind, text_, start))  # type: ignore[arg-type]
    tokens.append(Token("eof", "", len(text)))
    return tokens
