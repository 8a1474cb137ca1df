"""Diagnostics of the compiler front end.

Every user-facing error carries a :class:`Span` and renders as ``file:line:col: error: message``,
followed by the offending source line and a caret, never as a Python traceback.
"""

from __future__ import annotations

import linecache
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Span:
    """A source range (1-based line and column)."""

    filename: str
    line: int
    col: int
    end_line: int = 0
    end_col: int = 0

    @staticmethod
    def unknown() -> Span:
        return UNKNOWN_SPAN

    def is_known(self) -> bool:
        return self.line > 0

    def __str__(self) -> str:
        return f"{self.filename}:{self.line}:{self.col}"

    def __repr__(self) -> str:
        return f"Span({self})"


UNKNOWN_SPAN = Span("<unknown>", 0, 0)


class PyptoError(Exception):
    """Base of every user-facing compiler error."""

    kind = "error"

    def __init__(self, message: str, span: Span | None = None, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.span = span
        self.hint = hint

    def __str__(self) -> str:
        if self.span is not None and self.span.is_known():
            return f"{self.span}: {self.kind}: {self.message}"
        return f"{self.kind}: {self.message}"

    def render(self) -> str:
        """The message plus the source line with a caret under the column."""
        lines = [str(self)]
        if self.span is not None and self.span.is_known():
            src = linecache.getline(self.span.filename, self.span.line).rstrip("\n")
            if src:
                lines.append("    " + src)
                lines.append("    " + " " * max(self.span.col - 1, 0) + "^")
        if self.hint:
            lines.append(f"hint: {self.hint}")
        return "\n".join(lines)


class ParseError(PyptoError):
    """The DSL source uses syntax the language does not accept."""


class PyptoTypeError(PyptoError):
    """Operands have the wrong type, shape or dtype."""


# The words of a tile op's IR operands that the surface call spells otherwise (pl.load's keyword is
# ``valid_shape``; block.load's operand ``valid_shapes``).
SURFACE_WORDS: dict[str, tuple[tuple[str, str], ...]] = {"block.load": (("valid_shapes", "valid_shape"),)}


def as_written(e: PyptoError, op: str, spelled: str) -> PyptoError:
    """``e``, raised by the IR op ``op`` (``block.load``) that a call the user wrote lowers to, with
    the message naming that call (``pl.load: window [8, 24) exceeds dim 0 ...``) and its keywords:
    the user never wrote ``block.load`` and should not have to guess where it came from."""
    if not e.message.startswith(op + ":"):
        return e
    message = spelled + e.message[len(op):]
    for ir_word, word in SURFACE_WORDS.get(op, ()):
        message = message.replace(ir_word, word)
    return type(e)(message, e.span, e.hint)


class CompileError(PyptoError):
    """A pass or a code generator cannot handle the program."""


class VerifyError(PyptoError):
    """The IR breaks an invariant (SSA, types, memory)."""


class RuntimeFault(PyptoError):
    """Running a compiled program failed."""
