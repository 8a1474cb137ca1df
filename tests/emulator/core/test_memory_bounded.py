"""Memory does not grow with the number of instructions (issue 8 item 8): without a trace or
keep_log, a run keeps the live state only (the recorder's short reorder window, the race detector's
live accesses, the critical path's summaries); statistics are accumulated. The figure for ten
million instructions is benchmarks/memory_growth.py's."""

from __future__ import annotations

import json
import tracemalloc

import pytest

import pyptoemu
from tests.emulator.core.kernels import copy_loop


def _peak(n: int, every: int = 50, **kw) -> int:
    tracemalloc.start()
    try:
        res = pyptoemu.run(copy_loop(n, late_race=False, every=every, windows=20), sync="asis", data=False, **kw)
        assert res.findings == []
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_five_times_the_instructions_take_no_more_memory():
    pyptoemu.run(copy_loop(4, late_race=False), sync="asis", data=False)  # specs and caches loaded
    short, long = _peak(600), _peak(3000)  # about 3 600 and 18 000 instructions over the same windows
    assert long - short < 512 * 1024, (short, long)


def test_bounded_issue_queues_keep_a_loop_without_sync_points_flat():
    """No full barrier at all: the scalar unit stalls on a full issue queue (issue_queue_depth), so
    it holds a bounded number of issued instructions. With unbounded queues
    (``a2a3:unbounded_issue_queues``) it issues the whole loop before the pipes run it: 900 copies
    then peak ~2.5 MiB above 300 (~650 B per instruction held)."""
    pyptoemu.run(copy_loop(4, late_race=False), sync="asis", data=False)
    short, long = _peak(300, every=0), _peak(900, every=0)
    assert long - short < 512 * 1024, (short, long)


def test_keep_log_keeps_every_instruction():
    """The opposite, on purpose: every instruction kept costs memory per instruction."""
    res = pyptoemu.run(copy_loop(50, late_race=False), sync="asis", data=False, keep_log=True)
    assert len(res.core.trace_log) == res.chip.recorder.seq > 250
    plain = pyptoemu.run(copy_loop(50, late_race=False), sync="asis", data=False)
    with pytest.raises(AttributeError, match="keep_log=True"):
        plain.core.trace_log  # noqa: B018 - the access is what is tested


def test_a_trace_streams_one_event_per_instruction_and_keeps_no_log(tmp_path):
    path = tmp_path / "t.json"
    res = pyptoemu.run(copy_loop(300, late_race=False, every=50), sync="asis", data=False, trace=path)
    doc = json.loads(path.read_text())
    spans = [e for e in doc["traceEvents"] if e["ph"] == "X" and e["name"] != "scalar"]
    assert len(spans) == res.chip.recorder.seq > 1800
    assert sum(e["name"] == "tload" for e in spans) == 300
    assert doc["otherData"]["cycles"] == res.cycles and doc["otherData"]["bound"] == res.bound
    assert not res.core.keep_log and res.core.log == []
