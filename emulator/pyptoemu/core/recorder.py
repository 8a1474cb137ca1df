"""Where recorded instructions go: a stream in start order, so memory does not grow with the run.

Pipes record an instruction when it has started (a ``set_flag`` when it fires, a full barrier when
the pipes have drained), so records arrive almost, but not exactly, in start order. The checks that
follow a run (the race detector, the critical path, the trace writer) need them in ``(start, seq)``
order, the order the post-run analyses always used. The recorder holds records in arrival order and,
every few hundred records, sorts them by start (a stable sort of a nearly sorted list: records of
one start stay in arrival order, which is ``seq`` order) and hands on each one no future record can
start before: the *watermark* is the current cycle,
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

from bisect import bisect_right
from collections.abc import Iterator
from operator import attrgetter
from typing import Protocol

from pyptoemu.core.pipe import SET, XSET, Instr

DRAIN_EVERY = 512  # records between two drains (each drain looks at every pipe once)
_START = attrgetter("start")


class Consumer(Protocol):
    """Something that follows a run: it sees every recorded instruction once, in start order.

    A consumer may also have ``consume_batch(records)``, the same as ``consume`` on each record in
    turn: the recorder then hands it each drain's records in one call."""

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
        self.held: list[Instr] = []  # recorded, not handed on yet (in arrival order between drains)
        # the number of the last record. Something its one consumer takes by another way (a
        # scalar-unit stall handed on as a mark: see takes_stall_marks) is numbered ``seq + 0.5``:
        # after every record so far, before the next, and no number (nor a call here) of its own
        self.seq = 0
        self.drain_at = DRAIN_EVERY  # the seq at which the next drain is due
        # consumers that keep per-epoch state: told which epochs no instruction can name any more
        # (epochs_dropped), asked which epoch entries they still need (epochs_needed)
        self.epoch_watchers: list = []
        if keep_log:  # the pipes bind ``record`` once: the logging form, or the plain one
            self.record = self._record_and_log

    def add_core(self, core) -> None:
        self.cores.append(core)

    def record(self, core, instr: Instr) -> None:
        """``instr`` has started (a set: fired): numbered and held until no earlier start can come.
        (``Pipe.run`` does the same inline for its instructions, with :meth:`_record_and_log`'s log.)"""
        seq = self.seq = self.seq + 1
        instr.seq = seq
        instr.core = core
        self.held.append(instr)
        if seq >= self.drain_at:
            self.drain()

    def takes_stall_marks(self) -> bool:
        """Whether a scalar-unit stall on a full issue queue may be handed on as a mark (a number,
        ``seq + 0.5``, and what the critical path needs of it: ``ScalarUnit.pending_marks``) instead of recorded:
        every consumer takes those (``takes_stall_marks``) and nothing is kept."""
        return not self.keep_log and all(getattr(c, "takes_stall_marks", False) for c in self.consumers)

    def _record_and_log(self, core, instr: Instr) -> None:
        """:meth:`record`, also kept on ``core.log`` (``keep_log``)."""
        core.log.append(instr)
        Recorder.record(self, core, instr)

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
        self.drain_at = self.seq + DRAIN_EVERY
        held = self.held
        limit = self.watermark() if upto is None else upto
        held.sort(key=_START)  # stable: (start, seq) order, as the held records arrived in seq order
        ready = len(held) if held and held[-1].start <= limit else bisect_right(held, limit, key=_START)
        if ready:
            batch = held[:ready]
            del held[:ready]
            # each consumer takes the whole batch in turn: they are independent (each keeps its own
            # per-instruction state, Instr.path or Instr.vc, and none reads another's)
            for consumer in self.consumers:
                consume_batch = getattr(consumer, "consume_batch", None)
                if consume_batch is not None:  # one call for the batch
                    consume_batch(batch)
                else:
                    consume = consumer.consume
                    for ins in batch:
                        consume(ins)
        if not self.keep_log:
            self._forget_epochs()

    def held_cores(self) -> set[int]:
        """``id`` of each core with a record still held here."""
        return {id(ins.core) for ins in self.held}

    def _forget_epochs(self) -> None:
        """Drop the scalar epochs no unprocessed or future instruction can name."""
        held: dict[int, int] = {}
        if len(self.cores) == 1:  # one core: the least epoch held, without a lookup per record
            if self.held:
                held[id(self.cores[0])] = min([ins.sepoch for ins in self.held])
        else:
            for ins in self.held:
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
