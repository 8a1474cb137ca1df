"""Diagnostics shared by every part of the emulator.

Every error the user can cause carries a source location and renders as ``file:line:col: message``.
Two families decide the CLI exit code: :class:`InputError` (bad input: usage, parse, spec, verify;
exit 2) and :class:`KernelFault` (the kernel itself misbehaved at run time: deadlock, out of bounds,
capacity, unsupported op; exit 1).
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
    """Base of every user-facing emulator error."""

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


class KernelFault(PtoError):
    """The kernel faulted while running (exit code 1)."""


class UnsupportedOpError(KernelFault):
    """An op parses but the emulator cannot execute it yet."""


class BoundsError(KernelFault):
    """A view or tile access reaches outside its buffer."""


class CapacityError(KernelFault):
    """On-chip tiles do not fit their buffer, or are misaligned."""


class DeadlockError(KernelFault):
    """Some pipe waits for a flag that can never be set."""
