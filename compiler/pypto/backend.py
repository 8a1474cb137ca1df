"""``pypto.backend``: the process-wide target backend (spec pypto-jit §10.5).

The emulator models the A2/A3 chip (Ascend910B) and an A5 (Ascend950) core; the compiler's passes
target A2/A3 either way (its synchronisation is also correct on A5, whose vector pipe is in order).
"""

from __future__ import annotations

import enum


class BackendType(enum.Enum):
    """Code generation targets: ``PTO``/``CCE`` (the seed-era names) and the chip names of the jit era."""

    PTO = "PTO"
    CCE = "CCE"
    Ascend910B = "Ascend910B"
    Ascend950 = "Ascend950"


_PLATFORM_BACKEND = {"a2a3": BackendType.Ascend910B, "a2a3sim": BackendType.Ascend910B,
                     "a5": BackendType.Ascend950, "a5sim": BackendType.Ascend950}
_current: BackendType | None = None


def backend_of_platform(platform: str) -> BackendType:
    return _PLATFORM_BACKEND[platform]


def set_backend_type(backend_type: BackendType) -> None:
    """Configure the process-wide backend (passes and codegen of this project target A2/A3 either way)."""
    global _current
    if not isinstance(backend_type, BackendType):
        raise TypeError(f"set_backend_type expects a BackendType, got {type(backend_type).__name__}")
    _current = backend_type


def get_backend_type() -> BackendType:
    return _current if _current is not None else BackendType.Ascend910B


def is_backend_configured() -> bool:
    return _current is not None


def get_backend_instance(backend_type: BackendType | None = None) -> BackendType:
    return backend_type if backend_type is not None else get_backend_type()


def reset_for_testing() -> None:
    global _current
    _current = None


__all__ = ["BackendType", "get_backend_instance", "get_backend_type", "is_backend_configured",
           "reset_for_testing", "set_backend_type"]
