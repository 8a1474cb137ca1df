"""The recorder hands records on in (start, seq) order, each once no later record can start
earlier, whatever order they arrive in (a set is recorded when it fires, after instructions that
started later)."""

from __future__ import annotations

import random

from pyptoemu.core.pipe import OP, Instr, make_instr
from pyptoemu.core.recorder import DRAIN_EVERY, EpochLog, Recorder


class _Clock:
    now = 0


class _Scalar:
    def __init__(self) -> None:
        self.pending_start: int | None = None
        self.epochs = EpochLog()


class _Core:
    """A core whose scalar unit may still record something that started up to 40 cycles ago."""

    def __init__(self) -> None:
        self.scalar = _Scalar()
        self.pipes: dict = {}


class _Seen:
    def __init__(self) -> None:
        self.order: list[tuple[int, int]] = []

    def consume(self, ins: Instr) -> None:
        self.order.append((ins.start, ins.seq))

    def finish(self) -> None:
        pass


def test_records_come_out_in_start_order_and_none_before_the_watermark():
    rng = random.Random(7)
    env = _Clock()
    rec = Recorder(env)
    seen = _Seen()
    rec.consumers.append(seen)
    core = _Core()
    rec.add_core(core)
    for k in range(5 * DRAIN_EVERY + 17):
        env.now = k // 3  # records start at most 40 cycles before the clock, several per cycle
        core.scalar.pending_start = max(0, env.now - 40)
        ins = make_instr(OP, "tadd", None, "V", 0)
        ins.start = max(0, env.now - rng.randrange(40))
        ins.sepoch = 0
        rec.record(core, ins)
        assert all(start <= core.scalar.pending_start for start, _ in seen.order)
    handed = len(seen.order)
    assert 0 < handed < rec.seq  # drained as it went, the last cycles' records still held
    rec.finish()
    assert len(seen.order) == rec.seq
    assert seen.order == sorted(seen.order)  # (start, seq): ties in arrival order
    assert len({start for start, _ in seen.order}) < rec.seq  # there were ties to order
