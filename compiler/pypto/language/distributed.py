"""``import pypto.language.distributed as pld``: the multi-card surface (spec pypto-jit §12), which the
emulator does not support (§0: out of scope, reject clearly).

Why a module at all: upstream programs import it at the top of a file that also holds single-card
kernels. Without it the import fails with ``ModuleNotFoundError``, which names no feature; with it the
file imports, its single-card kernels run, and the first use of any ``pld.<name>`` (a window, a rank,
a collective, an annotation such as ``pld.DistributedTensor``) raises ``NotImplementedError`` naming
that name and saying multi-card distribution is not supported. ``@pl.jit.host`` entries are refused
the same way when called (``pypto.language.jit``).
"""

from __future__ import annotations

from typing import NoReturn


def __getattr__(name: str) -> NoReturn:
    if name.startswith("__"):  # the import machinery and tools probe dunders: those are plain misses
        raise AttributeError(name)
    raise NotImplementedError(
        f"pld.{name} (pypto.language.distributed) is part of multi-card distribution (ranks, HCCL windows, "
        "signals, collectives), which is not supported by the emulator; single-card programs run unchanged"
    )
