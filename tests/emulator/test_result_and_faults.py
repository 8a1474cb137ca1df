"""One result type and one fault rule: ``pyptoemu.run`` raises ``KernelFault`` whenever the CLI would
exit 1 (faults and error findings such as races), carrying the result, findings and trace; faulted
runs still report (the wrong-dtype rule shared with ``pypto.runtime.run``: tests/e2e/test_result_type.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import pyptoemu
from pyptoemu.errors import CapacityError, DeadlockError, FindingsError, StepLimitError

ROOT = Path(__file__).resolve().parents[2]
VADD = ROOT / "examples" / "vadd_32x32.pto"
RACE = ROOT / "examples" / "vadd_race.pto"
DEAD = ("func.func @k(%arg0: !pto.ptr<f32>) {\n"
        "  pto.wait_flag[<PIPE_MTE2>, <PIPE_V>, <EVENT_ID0>]\n  return\n}\n")
# z's 4 KiB tile placed at byte 196000 of the 192 KiB UB: a capacity fault after the two loads issued
# z's UB address computed at run time past the buffer's end (a constant one is rejected before running)
# the address is known only when it runs (block 0's index + 196000): the verifier folds constants
OVERFLOW = VADD.read_text().replace("%c8192_i64 = arith.constant 8192 : i64",
                                    "%cbig = arith.constant 196000 : i64\n    %blk = pto.get_block_idx\n"
                                    "    %c8192_i64 = arith.addi %blk, %cbig : i64")
LOOP = """func.func @spin(%arg0: !pto.ptr<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 100 : index
  scf.for %i = %c0 to %n step %c1 {
  }
  return
}
"""


def test_race_raises_with_the_result_and_warn_returns():
    with pytest.raises(pyptoemu.KernelFault) as info:
        pyptoemu.run(RACE)
    fault = info.value
    assert isinstance(fault, FindingsError) and fault.kind == "findings"
    assert fault.result.status == "findings" and "arg2" in fault.result.outputs
    races = [f for f in fault.findings if f.kind == "race"]
    assert len(races) == 1 and races[0].severity == "error"
    assert "race" in str(fault)
    ok = pyptoemu.run(RACE, races="warn")
    assert ok.status == "ok" and [f.severity for f in ok.findings if f.kind == "race"] == ["warning"]


def test_deadlock_keeps_its_trace_and_finding(tmp_path):
    trace = tmp_path / "dead.json"
    with pytest.raises(DeadlockError) as info:
        pyptoemu.run(DEAD, trace=trace)
    fault = info.value
    assert fault.result.status == "faulted" and fault.result.outputs == {}
    assert fault.trace == str(trace) and fault.result.trace == str(trace)
    assert [f.kind for f in fault.findings] == ["wait-never-set", "deadlock"]
    doc = json.loads(trace.read_text())
    names = {e["tid"]: e["args"]["name"] for e in doc["traceEvents"] if e.get("name") == "thread_name"}
    marks = [(e["name"], names[e["tid"]]) for e in doc["traceEvents"] if e["ph"] == "i"]
    assert ("deadlock", "PIPE_V") in marks
    assert doc["otherData"]["status"] == "faulted"


def test_capacity_fault_is_a_finding_with_its_kind(tmp_path):
    with pytest.raises(CapacityError) as info:
        pyptoemu.run(OVERFLOW, trace=tmp_path / "t.json")
    fault = info.value
    (finding,) = [f for f in fault.findings if f.kind == "capacity"]
    assert finding.severity == "error" and finding.locations[0].line == fault.loc.line
    assert fault.result.faulted and fault.result.cycles >= 0
    events = json.loads((tmp_path / "t.json").read_text())["traceEvents"]
    assert [e["name"] for e in events if e["ph"] == "i"] == ["capacity"]


def test_step_limit_is_its_own_fault():
    with pytest.raises(StepLimitError, match="more than 10 loop iterations"):
        pyptoemu.run(LOOP, max_steps=10)
    with pytest.raises(StepLimitError, match="more than 1 loop iteration; stopped"):  # (said '1 loop iterations')
        pyptoemu.run(LOOP, max_steps=1)
    assert pyptoemu.run(LOOP, max_steps=1000).status == "ok"


def test_result_repr_is_short_and_has_no_array_dump():
    res = pyptoemu.run(VADD)
    text = repr(res)
    assert text.startswith("RunResult(entry='vadd', status='ok', cycles=")
    assert "'arg2': float32[32, 32]" in text and "[[" not in text and len(text) < 250
    assert res.bound_pipe == "MTE2" and res.bound.startswith("MTE2")
    assert isinstance(res, pyptoemu.RunResult)
    assert len(res.cores) == 1 and res.cores[0].pipes["V"].instructions == 1 and res.blocks == 1
