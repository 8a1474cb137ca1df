"""Float errors follow IEEE silently: ``with QUIET:`` is ``with np.errstate(all="ignore"):`` that
costs next to nothing when nested.

Why: the semantics compute IEEE results (x/0 is inf, overflow is inf, 0/0 is NaN) and must not
warn about them, so every NumPy computation of theirs runs under ``errstate(all="ignore")``. Under
NumPy 2 one ``np.errstate`` entry costs about 4 us (a new error-state object and a context
variable), more than a 64x64 f32 multiply itself: two per tile op were a sixth of a run with data
(benchmarks/speed_vs_simpy.py). A run enters ``QUIET`` once around the whole simulation
(``Chip.run``, ``AICore.run``); the semantics' own ``with QUIET:`` inside it only count their
depth. Called on their own (tests, tools) they still enter the real ``np.errstate`` themselves.

The depth is per thread (NumPy's error state is too). Every user in this package asks for
``all="ignore"``; code that wants another error state uses ``np.errstate`` directly, which nests
inside ``QUIET`` as it nests inside any ``np.errstate``.
"""

from __future__ import annotations

import threading

import numpy as np


class _PerThread(threading.local):
    def __init__(self) -> None:
        self.state: list = [0, None]  # [depth, the np.errstate the outermost QUIET entered]


_LOCAL = _PerThread()  # one attribute read per entry and exit (a thread-local read costs ~0.15 us)


class _Quiet:
    """The context manager behind :data:`QUIET` (one shared, stateless instance)."""

    __slots__ = ()

    def __enter__(self) -> None:
        state = _LOCAL.state
        if state[0] == 0:
            outer = np.errstate(all="ignore")
            outer.__enter__()
            state[1] = outer
        state[0] += 1

    def __exit__(self, *exc) -> bool:
        state = _LOCAL.state
        state[0] -= 1
        if state[0] == 0:
            outer, state[1] = state[1], None
            outer.__exit__(*exc)
        return False


QUIET = _Quiet()

__all__ = ["QUIET"]
