"""``Pipe.run`` records its instructions itself (``Recorder.record`` written out at the tail of its
loop, with ``Recorder._record_and_log``'s log under ``keep_log``): every record is numbered once,
in arrival order, across the chip, names its core, is kept on that core's log with ``keep_log``,
and the recorder still drains every ``DRAIN_EVERY`` records, as the call did."""

from __future__ import annotations

from pathlib import Path

import pytest

import pyptoemu
from pyptoemu.core.recorder import DRAIN_EVERY, Recorder
from tests.emulator.core.test_deferred_stalls import EXAMPLES

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("name", EXAMPLES)
def test_every_record_is_numbered_once_in_arrival_order_on_its_cores_log(name, monkeypatch):
    drains = []
    original = Recorder.drain

    def drain(self, upto=None):
        drains.append((self.seq, upto))
        return original(self, upto)

    monkeypatch.setattr(Recorder, "drain", drain)
    res = pyptoemu.run(ROOT / "examples" / name, data=False, keep_log=True, **EXAMPLES[name])
    seqs = []
    for core in res.chip.cores:
        log = core.trace_log
        assert all(ins.core is core for ins in log)
        assert [ins.seq for ins in log] == sorted(ins.seq for ins in log)  # kept as they arrived
        seqs += [ins.seq for ins in log]
    assert sorted(seqs) == list(range(1, len(seqs) + 1))  # each record numbered once, none skipped
    # drained every DRAIN_EVERY records as the run went (then once at its end, up to infinity)
    during = [seq for seq, upto in drains if upto is None]
    assert during == [DRAIN_EVERY * k for k in range(1, len(seqs) // DRAIN_EVERY + 1)]


@pytest.mark.parametrize("name", EXAMPLES)
def test_a_run_shows_the_same_with_and_without_the_log(name):
    kw = {"data": False, **EXAMPLES[name]}
    logged = pyptoemu.run(ROOT / "examples" / name, keep_log=True, **kw)
    plain = pyptoemu.run(ROOT / "examples" / name, **kw)
    assert (plain.cycles, plain.bound, [str(f) for f in plain.findings]) == (
        logged.cycles, logged.bound, [str(f) for f in logged.findings])
