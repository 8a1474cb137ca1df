"""When each launch of a program runs on the chip, so that a program's cycles are its schedule, not the
sum of its launches (spec pypto-jit §1.3: the timing mode may overlap tasks with no path between them
in the task graph).

Functionally the host still runs the launches one after another in program order (a legal schedule of
the graph). Each launch is timed by the emulator on its own, from cycle 0; this module then places it
on the chip the way the runtime would dispatch it:

* **Dependencies** are inferred from the buffers each launch touches and each parameter's direction
  (spec §9): a read waits for the last overlapping write, a write waits for every earlier overlapping
  read and write. Buffers are the caller's NumPy arrays; a view is a byte range of its base's
  memory, so launches on disjoint windows of one tensor are independent and launches on overlapping
  windows are ordered.
* **Cores**: the launch needs as many cores of each kind as it occupied when timed alone (its
  ``cores``); it starts once its dependencies have finished and that many cores of each kind are
  free. Each core it takes stays busy for that core's own cycles.
* **The host** issues launches in program order and takes no time to do it; a host access to
  tensor data (``pl.read``/``pl.write``/assemble in orchestration) waits for the launches that wrote
  (or, for a write, touched) that memory, and no later launch starts before it.

A program's cycles are the time its last launch finishes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.lib.array_utils import byte_bounds

from ptoisa.machine import Machine


def memory_range(array: np.ndarray) -> tuple[int, int]:
    """The bytes ``array`` spans in its base's memory, as ``[low, high)`` addresses."""
    if array.size == 0:
        low = array.__array_interface__["data"][0]
        return low, low
    return byte_bounds(array)


@dataclass
class _Access:
    low: int
    high: int
    writes: bool
    finish: int
    keep: Any = None  # the array itself: while the program runs, its memory is not handed out again

    def conflicts(self, low: int, high: int, writes: bool) -> bool:
        return (self.writes or writes) and self.low < high and low < self.high


@dataclass
class Timeline:
    """The chip's cores over time and the accesses of the launches placed so far."""

    machine: Machine
    free: dict[str, list[int]] = field(default_factory=dict)  # kind -> the time each core frees up
    accesses: list[_Access] = field(default_factory=list)
    host: int = 0  # no launch starts before the host reached it
    end: int = 0  # when the last launch finishes

    def __post_init__(self) -> None:
        spec = self.machine.chip_spec()
        self.free = {kind: [0] * spec.count(kind) for kind in spec.kinds}

    def _ready(self, ranges: list[tuple[int, int, bool]]) -> int:
        t = self.host
        for low, high, writes in ranges:
            for a in self.accesses:
                if a.finish > t and a.conflicts(low, high, writes):
                    t = a.finish
        return t

    def _touch(self, ranges: list[tuple[int, int, bool]], arrays: list[np.ndarray], finish: int) -> None:
        self.accesses.extend(_Access(low, high, writes, finish, a)
                             for (low, high, writes), a in zip(ranges, arrays, strict=True))

    def launch(self, reads: list[np.ndarray], writes: list[np.ndarray], cores: list[Any], cycles: int) -> int:
        """Place one launch (timed alone: ``cycles``, on ``cores``); returns its start cycle."""
        ranges = [(*memory_range(a), False) for a in reads] + [(*memory_range(a), True) for a in writes]
        start = self._ready(ranges)
        by_kind: dict[str, list[int]] = {}
        for core in cores:
            by_kind.setdefault(core.kind, []).append(int(core.cycles))
        picked: dict[str, list[int]] = {}
        for kind, busy in by_kind.items():
            pool = self.free.setdefault(kind, [])
            while len(pool) < len(busy):  # a kind the machine file does not count: as many as needed
                pool.append(0)
            order = sorted(range(len(pool)), key=lambda i: pool[i])[:len(busy)]
            picked[kind] = order
            start = max(start, max(pool[i] for i in order))
        for kind, busy in by_kind.items():
            for i, b in zip(picked[kind], sorted(busy, reverse=True), strict=True):
                self.free[kind][i] = start + b
        finish = start + int(cycles)
        self._touch(ranges, [*reads, *writes], finish)
        self.end = max(self.end, finish)
        return start

    def host_access(self, array: np.ndarray, writes: bool) -> None:
        """The host reads (or writes) ``array``: it waits for the launches it depends on."""
        low, high = memory_range(array)
        self.host = self._ready([(low, high, writes)])
        self._touch([(low, high, writes)], [array], self.host)
