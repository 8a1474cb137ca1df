"""A progress bar for long runs: simulated cycles and instructions, on a terminal's stderr.

Library: tqdm (the optional extra ``pyptoemu[progress]``). Why tqdm: it is pure Python with no
dependencies of its own, writes to any stream, handles terminal width and rate display, and is among
the most used and maintained packages on PyPI; rich would also do, but brings a full rendering stack
for one line. Without tqdm there is simply no bar.

The bar is drawn by a background thread that reads the core's clock a few times a second, so the
simulation loop carries no hook and no cost. It appears only after ``DELAY_S`` seconds (short runs
stay quiet), never on stdout, and the CLI asks for it only when stderr is a terminal and neither
``--json`` nor ``--quiet`` is given.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:  # typing.Self is Python 3.11+
    from typing_extensions import Self

DELAY_S = 2.0
INTERVAL_S = 0.25


class ProgressMonitor(AbstractContextManager):
    """While the ``with`` block runs, show the simulated cycles and instructions of ``core`` (a core,
    or a chip with ``cores``) on ``stream``."""

    def __init__(self, core: Any, stream: IO[str], bar_factory: Callable[..., Any],
                 delay: float = DELAY_S, interval: float = INTERVAL_S):
        self.core = core
        self.stream = stream
        self.bar_factory = bar_factory
        self.delay = delay
        self.interval = interval
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._watch, name="pyptoemu-progress", daemon=True)
        self.shown = False

    def __enter__(self) -> Self:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.thread.join()

    def _cores(self) -> list:
        return list(getattr(self.core, "cores", None) or [self.core])

    def _cycles(self) -> int:
        """The simulated time reached: SimPy's clock, or a scalar unit's when it runs ahead of it
        (it charges scalar work to its own clock and yields to SimPy only to issue or wait)."""
        ahead = max((getattr(c.scalar, "vclock", 0) for c in self._cores()), default=0)
        return int(max(self.core.env.now, ahead))

    def _instructions(self) -> int:
        return sum(int(c.scalar.count) + sum(int(p.count) for p in list(c.pipes.values())) for c in self._cores())

    def _watch(self) -> None:
        if self.stop.wait(self.delay):
            return
        bar = self.bar_factory(total=None, unit=" cycles", unit_scale=True, file=self.stream, leave=False,
                               desc="simulating", dynamic_ncols=True)
        self.shown = True
        try:
            while True:
                self._refresh(bar)
                if self.stop.wait(self.interval):
                    self._refresh(bar)  # the final count, however the run ended
                    break
        finally:
            bar.close()

    def _refresh(self, bar: Any) -> None:
        bar.update(self._cycles() - bar.n)
        bar.set_postfix_str(f"{self._instructions()} instructions", refresh=True)


def progress_for(stream: IO[str]) -> Callable[[Any], ProgressMonitor] | None:
    """A factory of monitors drawing on ``stream``, or None when tqdm is not installed."""
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return lambda core: ProgressMonitor(core, stream, tqdm)


__all__ = ["DELAY_S", "ProgressMonitor", "progress_for"]
