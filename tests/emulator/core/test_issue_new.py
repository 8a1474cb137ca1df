"""``ScalarUnit.issue_new`` is ``issue(pipe, make_instr(...))`` written out in one call: each
instruction it makes has every field the two calls would give it, and whole runs (every example
kernel, and generated ones on shallow queues full of stalls) come out the same with it replaced by
the two calls."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pyptoemu
from pyptoemu.core.pipe import OP, SET, WAIT, Instr, make_instr
from pyptoemu.core.scalar import ScalarUnit
from tests.emulator.core.test_deferred_stalls import EXAMPLES, OPS, _machine, _program
from tests.emulator.core.test_leap import _outcome

ROOT = Path(__file__).resolve().parents[3]
ISSUE_SETS = {"issue", "low", "pidx", "sepoch", "iseq"}  # the fields ScalarUnit.issue sets
STALL = {"stall_lag", "stall_made_by", "stall_taken", "stall_watch"}  # set on an issue that holds a stall


def _two_calls(self, pipe, kind, name, loc, *args):
    """The straightforward formulation."""
    ins = make_instr(kind, name, loc, pipe, 0, *args)
    self.issue(pipe, ins)
    return ins


def test_each_instruction_has_the_fields_of_make_instr_and_issue(monkeypatch):
    original = ScalarUnit.issue_new
    checked = []

    def issue_new(self, pipe, kind, name, loc, *args):
        target = self.core.pipes[pipe]
        stall = self.deferred[-1] if self.deferred else None
        clock, total, pidx, epoch = self.vclock, self.issued_total, target.issued, self.epochs.count
        ins = original(self, pipe, kind, name, loc, *args)
        ref = make_instr(kind, name, loc, pipe, 0, *args)
        for slot in Instr.__slots__:
            if slot in ISSUE_SETS or slot in STALL:
                continue
            assert getattr(ins, slot) == getattr(ref, slot), slot
        assert (ins.low, ins.iseq, ins.pidx, ins.sepoch) == (clock + self.issue_cost, total + 1, pidx, epoch)
        assert ins.issue is (stall if stall is not None else ins.low)
        held = len(target.queue) > target.stall_above
        assert all(hasattr(ins, s) for s in ("stall_lag", "stall_taken", "stall_watch")) == held
        assert ins in target.queue
        checked.append(kind)
        return ins

    monkeypatch.setattr(ScalarUnit, "issue_new", issue_new)
    for depth in (2, 16):
        pyptoemu.run(ROOT / "examples" / "double_buffer_1024.pto", machine=_machine(depth), data=False)
    assert len(checked) > 5000 and {OP, SET, WAIT} <= set(checked)


@pytest.mark.parametrize("name", EXAMPLES)
def test_issue_new_leaves_every_example_run_unchanged(name, monkeypatch):
    fused, _ = _outcome(ROOT / "examples" / name, data=True, **EXAMPLES[name])
    assert fused[0] != "error", fused
    monkeypatch.setattr(ScalarUnit, "issue_new", _two_calls)
    assert fused == _outcome(ROOT / "examples" / name, data=True, **EXAMPLES[name])[0]


@settings(max_examples=20, deadline=None, derandomize=True)
@given(ops=st.lists(OPS, min_size=1, max_size=60), depth=st.sampled_from([1, 2, 16]), fault=st.booleans())
def test_issue_new_leaves_generated_runs_unchanged(ops, depth, fault):
    text = _program(ops, fault)
    fused, _ = _outcome(text, machine=_machine(depth), sync="asis", data=False)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(ScalarUnit, "issue_new", _two_calls)
        assert fused == _outcome(text, machine=_machine(depth), sync="asis", data=False)[0]
