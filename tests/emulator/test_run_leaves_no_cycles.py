"""What a run leaves behind: once its result is dropped, nearly everything the run built is freed by
reference counting (api._run_chip ends the run: Chip.end_run), not left in reference cycles for the
garbage collector. The result still reports, traces and shows its schedule."""

from __future__ import annotations

import gc
import json
from pathlib import Path

import pyptoemu

STREAM = Path(__file__).resolve().parents[2] / "examples" / "double_buffer_1024.pto"
# what stays in cycles: the chip's own back-references (chip <-> cores <-> pipes and scalar unit,
# SimPy's environment); before the run let go of its bound steps and pipe processes: about 950
MOST_LEFT_IN_CYCLES = 400


def _left_in_cycles(**kw) -> int:
    pyptoemu.run(STREAM, **kw)  # (the first run of a text fills the caches a later run reuses)
    gc.collect()
    gc.disable()
    try:
        result = pyptoemu.run(STREAM, **kw)
        del result
        return gc.collect()
    finally:
        gc.enable()


def test_a_timing_only_run_leaves_few_objects_in_cycles():
    assert _left_in_cycles(races="off", data=False) < MOST_LEFT_IN_CYCLES


def test_a_run_with_data_and_races_leaves_few_objects_in_cycles():
    assert _left_in_cycles() < MOST_LEFT_IN_CYCLES


def test_the_result_of_an_ended_run_still_reports_and_traces(tmp_path):
    first = pyptoemu.run(STREAM, keep_log=True, trace=tmp_path / "t.json")
    again = pyptoemu.run(STREAM, keep_log=True)
    logs = []
    for r in (first, again):
        assert r.status == "ok" and r.cycles > 0 and r.bound
        log = r.chip.cores[0].trace_log
        assert log and all(i.core is r.chip.cores[0] and 0 <= i.start <= i.done for i in log)
        logs.append([(i.name, i.pipe, i.start, i.done) for i in log])
    assert (again.cycles, again.bound, again.instructions) == (first.cycles, first.bound, first.instructions)
    assert logs[0] == logs[1]
    doc = json.loads((tmp_path / "t.json").read_text())  # written after the run ended
    assert doc["otherData"]["status"] == "ok"
    assert sum(1 for e in doc["traceEvents"] if e["ph"] == "X") >= len([i for i in logs[0] if i[1] != "S"])
