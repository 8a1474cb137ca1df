"""Where recorded instructions go: a stream in start order, so memory does not grow with the run.

Pipes record an instruction when it has started (a ``set_flag`` when it fires, a full barrier when
the pipes have drained), so records arrive almost, but not exactly, in start order. The checks that
follow a run (the race detector, the critical path, the trace writer) need them in ``(start, seq)``
order, the order the post-run analyses always used. The recorder holds records in a small heap and
hands each one on once no future record can start earlier: the *watermark* is the current cycle,
lowered to the start of any instruction that has started but is not recorded yet (a ``set_flag``
draining its pipe, a full barrier or a scalar-unit tile op in flight). So at any moment the recorder
holds only the instructions of the last few hundred cycles, and nothing keeps an instruction alive
once its consumers are done with it: a run of ten million instructions needs the memory of a run of
a thousand. ``keep_log`` (``pyptoemu.run(..., keep_log=True)``) keeps every instruction on
``core.trace_log`` as well, for tools and tests that inspect the schedule afterwards.

The scalar unit's sync points (``ScalarUnit.epochs``) are an :class:`EpochLog`: instructions name
the epoch they were issued in, and the recorder forgets epochs no unprocessed instruction can name.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator
from typing import Protocol

from pyptoemu.core.pipe import SET, XSET, Instr

DRAIN_EVERY = 512  # records between two drains of the heap (each drain looks at every pipe once)


class Consumer(Protocol):
    """Something that follows a run: it sees every recorded instruction once, in start order."""

    def consume(self, ins: Instr) -> None: ...

    def finish(self) -> None: ...


class EpochLog:
    """The scalar unit's sync points in program order, with the oldest ones forgettable.

    ``len`` is the number of epochs ever appended (what ``Instr.sepoch`` counts); indexing works for
    every epoch not yet dropped."""

    __slots__ = ("base", "count", "items")

    def __init__(self) -> None:
        self.items: list[tuple] = []
        self.base = 0  # epochs before this one were dropped
        self.count = 0  # epochs ever appended (``len``; read as an attribute on the issue path)

    def append(self, item: tuple) -> None:
        self.items.append(item)
        self.count += 1

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, i: int) -> tuple:
        if i < self.base:
            raise IndexError(f"epoch {i} was dropped (kept from {self.base})")
        return self.items[i - self.base]

    def __iter__(self) -> Iterator[tuple]:
        if self.base:
            raise IndexError(f"epochs before {self.base} were dropped: iterate with keep_log=True")
        return iter(self.items)

    def drop_before(self, i: int) -> None:
        """Forget the epochs before ``i`` (kept in large steps: a list slice is O(kept))."""
        n = i - self.base
        if n > 0 and n * 2 >= len(self.items):
            del self.items[:n]
            self.base = i


class Recorder:
    """The one place instructions are recorded: numbered, reordered by start, handed on."""

    def __init__(self, env, keep_log: bool = False) -> None:
        self.env = env
        self.keep_log = keep_log
        self.consumers: list[Consumer] = []
        self.cores: list = []
        self.heap: list = []
        self.seq = 0
        self.since_drain = 0
        # consumers that keep per-epoch state: told which epochs no instruction can name any more
        # (epochs_dropped), asked which epoch entries they still need (epochs_needed)
        self.epoch_watchers: list = []

    def add_core(self, core) -> None:
        self.cores.append(core)

    def record(self, core, instr: Instr) -> None:
        self.seq += 1
        instr.seq = self.seq
        instr.core = core
        if self.keep_log:
            core.log.append(instr)
        heapq.heappush(self.heap, (instr.start, instr.seq, instr))
        self.since_drain += 1
        if self.since_drain >= DRAIN_EVERY:
            self.drain()

    def watermark(self) -> float:
        """No instruction recorded from now on can start before this cycle."""
        low = self.env.now
        for core in self.cores:
            pending = core.scalar.pending_start
            if pending is not None and pending < low:
                low = pending
            for pipe in core.pipes.values():
                cur = pipe.current
                if cur is not None and cur.seq < 0 and cur.kind in (SET, XSET) and 0 <= cur.start < low:
                    low = cur.start
        return low

    def drain(self, upto: float | None = None) -> None:
        """Hand on every held record that starts no later than ``upto`` (default: the watermark)."""
        self.since_drain = 0
        heap = self.heap
        limit = self.watermark() if upto is None else upto
        consumers = self.consumers
        pop = heapq.heappop
        if len(consumers) == 1:  # the usual case (the critical path alone): no inner loop per record
            consume = consumers[0].consume
            while heap and heap[0][0] <= limit:
                consume(pop(heap)[2])
        else:
            while heap and heap[0][0] <= limit:
                ins = pop(heap)[2]
                for c in consumers:
                    c.consume(ins)
        if not self.keep_log:
            self._forget_epochs()

    def _forget_epochs(self) -> None:
        """Drop the scalar epochs no unprocessed or future instruction can name."""
        held: dict[int, int] = {}
        if len(self.cores) == 1:  # one core: the least epoch held, without a lookup per record
            if self.heap:
                held[id(self.cores[0])] = min([entry[2].sepoch for entry in self.heap])
        else:
            for _, _, ins in self.heap:
                k = id(ins.core)
                held[k] = min(held.get(k, ins.sepoch), ins.sepoch)
        for core in self.cores:
            epochs = core.scalar.epochs
            need = min(len(epochs), held.get(id(core), len(epochs)))
            for pipe in core.pipes.values():
                if pipe.current is not None and pipe.current.seq < 0:
                    need = min(need, pipe.current.sepoch)
                if pipe.queue:
                    need = min(need, pipe.queue[0].sepoch)
            for watch in self.epoch_watchers:
                watch.epochs_dropped(core, need)
                need = min(need, watch.epochs_needed(core))
            epochs.drop_before(need)

    def finish(self) -> None:
        """The run is over (or stopped): hand on everything held, then let the consumers conclude."""
        self.drain(float("inf"))
        for c in self.consumers:
            c.finish()


__all__ = ["DRAIN_EVERY", "Consumer", "EpochLog", "Recorder"]
