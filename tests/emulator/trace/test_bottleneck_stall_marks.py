"""A scalar-unit stall on a full issue queue handed on to the critical path as a mark (no record:
``Recorder.takes_stall_marks``, ``_CoreState.take_marks``) gives every instruction the path it gets
from the stall recorded as an instruction, and the run the same bound: on every example, on issue
queues of depth 16 and 2 (stalls after idle pipes, rows of stalls a sync point or a late issue reads
in between), and on generated mixes with queues of depth 1 to 16."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pyptoemu
from ptoisa.machine import load_machine
from pyptoemu.core.recorder import Recorder
from pyptoemu.errors import PtoError
from pyptoemu.trace import bottleneck
from tests.emulator.core.test_deferred_stalls import EXAMPLES, OPS, _program

ROOT = Path(__file__).resolve().parents[3]


def _machine(depth: int):
    base = load_machine("a2a3")
    return dataclasses.replace(base, params={**base.params, "issue_queue_depth": depth})


def _paths(kernel, machine, marks: bool, monkeypatch, **kw) -> tuple:
    """The bound, the critical path summed, and every recorded instruction's path but the stalls'
    (kept with keep_log; ``marks``: the stalls handed on as marks whatever the consumers)."""
    with monkeypatch.context() as m:
        if marks:
            m.setattr(Recorder, "takes_stall_marks", lambda self: True)
        try:
            r = pyptoemu.run(kernel, machine=machine, data=False, races="off", keep_log=True, **kw)
        except PtoError as e:  # a fault: what ran before it has its paths all the same
            r = getattr(e, "result", None)
            if r is None:  # refused before running
                return ("refused", str(e)), 0, []
    waits_of = r.chip.recorder.consumers[0].waits_of  # the waits a path crossed, by kind
    rows = []
    for core in r.chip.cores:
        for ins in sorted(core.trace_log, key=lambda i: (i.start, i.seq)):
            if ins.pipe == "S" and ins.name == "issue":
                continue
            p = ins.path
            if type(p) is tuple:  # a pipe path (bottleneck.WAITS): as a list, up to its start
                p = bottleneck._until(ins, ins.start)
            elif type(p) is not list:  # a full barrier whose path was not asked for
                p = bottleneck._until(ins, ins.end)
            rows.append((ins.start, ins.pipe, ins.name, tuple(p[:bottleneck.WAITS]), sorted(waits_of(p).items())))
    b = r.chip.recorder.consumers[0].result(r.cycles)
    stalls = sum(c.scalar.stalls for c in r.chip.cores)
    return (r.bound, b.charged, b.waits, rows), stalls, [c.scalar.pending_marks for c in r.chip.cores]


@pytest.mark.parametrize("depth", [16, 2])
@pytest.mark.parametrize("name", EXAMPLES)
def test_stalls_handed_on_as_marks_give_every_path_and_bound_unchanged(name, depth, monkeypatch):
    path = ROOT / "examples" / name
    recorded, stalls, _ = _paths(path, _machine(depth), False, monkeypatch, **EXAMPLES[name])
    marked, stalls_marked, pending = _paths(path, _machine(depth), True, monkeypatch, **EXAMPLES[name])
    assert marked == recorded
    assert stalls_marked == stalls and not any(pending)  # every mark taken by the end
    if name == "double_buffer_1024.pto":
        assert stalls > 500


def test_marks_only_when_the_path_is_the_one_consumer_and_nothing_is_kept():
    """Without keep_log, a trace or the race check, stalls are marks (each numbered a half above the
    record before it: no number of its own); otherwise they are recorded (each a record, numbered)."""
    stream = ROOT / "examples" / "double_buffer_1024.pto"
    light = pyptoemu.run(stream, data=False, races="off")
    su = light.chip.cores[0].scalar
    assert su.stall_marks is True and su.stalls > 500
    for kw in ({"races": "off", "keep_log": True}, {"races": "warn"}):
        r = pyptoemu.run(stream, data=False, **kw)
        assert r.chip.cores[0].scalar.stall_marks is False
        assert r.bound == light.bound and r.chip.recorder.seq == light.chip.recorder.seq + su.stalls
        assert r.chip.cores[0].scalar.stalls == su.stalls


@settings(max_examples=15, deadline=None)
@given(ops=st.lists(OPS, min_size=1, max_size=60), depth=st.sampled_from([1, 2, 3, 16]), fault=st.booleans())
def test_marks_leave_generated_paths_unchanged(ops, depth, fault):
    text = _program(ops, fault)
    with pytest.MonkeyPatch.context() as m:
        recorded = _paths(text, _machine(depth), False, m, sync="asis")
        marked = _paths(text, _machine(depth), True, m, sync="asis")
    assert marked[0] == recorded[0] and marked[1] == recorded[1]
