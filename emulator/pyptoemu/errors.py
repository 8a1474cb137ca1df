"""The emulator's run-time faults, on top of the contract's base errors.

:class:`KernelFault` (the kernel itself misbehaved at run time: deadlock, out of bounds, capacity,
unsupported op) ends a CLI run with exit code 1. The base types are re-exported here because they are
part of the emulator's public API (``pyptoemu.InputError``).
"""

from __future__ import annotations

from ptoisa.errors import UNKNOWN_LOC, InputError, Loc, ParseError, PtoError, SpecError, VerifyError

__all__ = [
    "UNKNOWN_LOC",
    "BoundsError",
    "CapacityError",
    "DeadlockError",
    "FindingsError",
    "InputError",
    "InternalError",
    "KernelFault",
    "Loc",
    "OperandError",
    "OutputError",
    "ParseError",
    "PtoError",
    "ResourceError",
    "SpecError",
    "StepLimitError",
    "UndefinedResultError",
    "UnsupportedOpError",
    "VerifyError",
]


class OutputError(InputError):
    """A result file cannot be written (unwritable directory, a directory in the way): exit code 2."""


class ResourceError(InputError):
    """The run needs more memory than this machine has, or more than the emulator allows itself
    (exit code 2)."""


class KernelFault(PtoError):
    """The kernel faulted while running, or a run ended with an error finding (exit code 1).

    ``pyptoemu.run`` raises it whenever the CLI would exit 1: a fault during the run (``kind``
    ``deadlock``, ``bounds``, ``capacity``, ``unsupported``, ``step-limit``, ``fault``) or an error
    finding such as a race (``kind`` ``findings``). ``result`` is the run up to that point (a
    :class:`pyptoemu.RunResult` with ``status == "faulted"`` for a fault), ``findings`` its findings,
    ``trace`` the trace path if one was written.
    """

    kind = "fault"

    def __init__(self, message: str, loc=None):
        super().__init__(message, loc)
        self.result = None
        self.findings: list = []
        self.trace: str | None = None


class OperandError(KernelFault, ValueError):
    """An op's operands break its semantics at run time (a mask too narrow, a bad sort record...);
    raised by the semantics functions, located at the op by the tile op's start step. Also a
    ValueError, for callers of a semantics function outside the emulator."""


class UndefinedResultError(OperandError):
    """The data give an op's element no value (integer division by 0, a shift by the bit width or
    more): decided by the values, not the shapes, so a timing-only run's shape check on zero
    stand-in data does not raise it as a fault."""


class UnsupportedOpError(KernelFault):
    """An op parses but the emulator cannot execute it yet."""

    kind = "unsupported"


class BoundsError(KernelFault):
    """A view or tile access reaches outside its buffer."""

    kind = "bounds"


class CapacityError(KernelFault):
    """On-chip tiles do not fit their buffer, or are misaligned."""

    kind = "capacity"


class DeadlockError(KernelFault):
    """Some pipe waits for a flag that can never be set."""

    kind = "deadlock"


class StepLimitError(KernelFault):
    """The kernel ran more loop iterations than ``max_steps`` allows (an endless loop?)."""

    kind = "step-limit"


class FindingsError(KernelFault):
    """The run completed, but with error-level findings (races, double sets, ...)."""

    kind = "findings"

class InternalError(Exception):
    """An unexpected exception inside the emulator: a bug of pyptoemu, not of the kernel (CLI exit
    code 3). Deliberately not a :class:`PtoError`, so that no caller mistakes it for a fault of the
    kernel or for bad input. ``cause`` is the original exception; ``what`` and ``loc`` say which op
    was being processed."""

    exit_code = 3

    def __init__(self, cause: BaseException, what: str = "", loc: Loc | None = None):
        super().__init__(cause, what, loc)  # SimPy re-raises a copy built from args: keep them all
        self.cause = cause
        self.what = what
        self.loc = loc

    def __str__(self) -> str:
        where = f"{self.loc}: " if self.loc is not None else ""
        return (f"{where}internal error while processing {self.what}: {type(self.cause).__name__}: "
                f"{self.cause}\nThis is a bug in pyptoemu, not in your kernel: please report it with the "
                f"kernel and the command line that ran it.")
