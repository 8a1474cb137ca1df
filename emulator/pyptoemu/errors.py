"""The emulator's run-time faults, on top of the contract's base errors.

:class:`KernelFault` (the kernel itself misbehaved at run time: deadlock, out of bounds, capacity,
unsupported op) ends a CLI run with exit code 1. The base types are re-exported here because they are
part of the emulator's public API (``pyptoemu.InputError``).
"""

from __future__ import annotations

from ptoisa.errors import UNKNOWN_LOC, InputError, Loc, ParseError, PtoError, SpecError, VerifyError

__all__ = ["UNKNOWN_LOC", "BoundsError", "CapacityError", "DeadlockError", "InputError", "KernelFault", "Loc",
           "ParseError", "PtoError", "SpecError", "UnsupportedOpError", "VerifyError"]


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
