"""The base error types of the `.pto` contract, shared by the emulator and the compiler.

Every error the user can cause carries a source location and renders as ``file:line:col: message``.
:class:`InputError` (bad input: usage, parse, spec, verify) ends a CLI run with exit code 2; the
emulator adds its run-time faults (exit code 1) as subclasses of :class:`PtoError`.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Loc:
    """A position in a source file (1-based line and column)."""

    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


UNKNOWN_LOC = Loc("<unknown>", 0, 0)


class PtoError(Exception):
    """Base of every user-facing error of the contract, the emulator and the compiler's runs."""

    exit_code = 1

    def __init__(self, message: str, loc: Loc | None = None):
        super().__init__(message)
        self.message = message
        self.loc = loc

    def __str__(self) -> str:
        return f"{self.loc}: {self.message}" if self.loc is not None else self.message


class InputError(PtoError):
    """The input is malformed or inconsistent (exit code 2)."""

    exit_code = 2


class ParseError(InputError):
    """The `.pto` text does not follow the format."""


class SpecError(InputError):
    """An ISA or machine YAML file is invalid."""


class VerifyError(InputError):
    """The program parses but is not well formed (types, operands, names)."""
