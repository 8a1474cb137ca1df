"""A scalar-unit stall on a full issue queue takes its critical path only when a later question asks
for it (``bottleneck._ROOM`` until then): worked out late, it is the path worked out as soon as the
stall is seen, for every stall, and the run's bound is the same."""

from __future__ import annotations

from pathlib import Path

import pyptoemu
from pyptoemu.trace import bottleneck

STREAM = Path(__file__).resolve().parents[3] / "examples" / "double_buffer_1024.pto"


def _run() -> tuple[str, list, int]:
    r = pyptoemu.run(STREAM, data=False, races="off", keep_log=True)
    waits_of = r.chip.recorder.consumers[0].waits_of  # the waits a path crossed, by kind
    rows, late = [], 0
    for ins in sorted(r.chip.cores[0].trace_log, key=lambda i: (i.start, i.seq)):
        p = ins.path
        if p is bottleneck._ROOM:
            late += 1
            p = bottleneck._until(ins, ins.end)  # a stall ends at its start: its own path
        elif type(p) is tuple:  # a pipe path (bottleneck.WAITS): as a list, up to its start
            p = bottleneck._until(ins, ins.start)
        if type(p) is list:
            rows.append((ins.start, ins.pipe, ins.name, tuple(p[:bottleneck.WAITS]), sorted(waits_of(p).items())))
    return r.bound, rows, late


def test_a_stall_path_worked_out_late_is_the_one_worked_out_at_once(monkeypatch):
    bound, rows, late = _run()
    consume_batch = bottleneck.CriticalPath.consume_batch

    def at_once(self, batch):  # each stall's path worked out as the path sees it
        for ins in batch:
            consume_batch(self, (ins,))
            if ins.path is bottleneck._ROOM:
                bottleneck._until(ins, ins.start)

    monkeypatch.setattr(bottleneck.CriticalPath, "consume_batch", at_once)
    bound_at_once, rows_at_once, late_at_once = _run()
    stalls = [r for r in rows if r[1] == "S" and r[2] == "issue"]
    assert len(stalls) > 500 and late > 500 and late_at_once == 0
    assert len({r[3] for r in stalls}) > 100  # paths that differ from stall to stall
    assert bound == bound_at_once
    assert rows == rows_at_once
