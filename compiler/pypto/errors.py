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


class CompileError(PyptoError):
    """A pass or a code generator cannot handle the program."""


class VerifyError(PyptoError):
    """The IR breaks an invariant (SSA, types, memory)."""


class RuntimeFault(PyptoError):
    """Running a compiled program failed."""
