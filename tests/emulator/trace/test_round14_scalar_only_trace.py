"""Red team 14: the Chrome trace and the bound of a kernel whose only work is the scalar unit's (an
scf.for summing indices, then a view, no tile op). Its S lane must show the scalar unit's activity:
the span closes at the end of the run, after the writer flushed what it held back, and was lost (a
trace with no slice at all). The same kernel stopping at a fault lost its slice too (ScalarUnit.run
re-raised without closing the span), and its bound read "no instructions ran" though the scalar unit
worked the whole makespan (CriticalPath.result); both fixed by red team 15."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import pyptoemu
from pyptoemu.errors import PtoError

KERNEL = """module {
  func.func @k(%x: !pto.ptr<f32>, %n: index)
      attributes {pto.kernel_kind = #pto.kernel_kind<vector>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %c32 = arith.constant 32 : index
    %s = scf.for %i = %c0 to %c32 step %c1 iter_args(%a = %c0) -> (index) {
      %b = arith.addi %a, %i : index
      scf.yield %b : index
    }
    %vx = pto.make_tensor_view %x, shape = [%n, %c32], strides = [%c32, %c1] : !pto.tensor_view<?x?xf32>
    %px = pto.partition_view %vx, offsets = [ROW, %c0], sizes = [%c8, %c32] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<8x32xf32>
    return
  }
}
"""


def _scalar_slices(trace: Path) -> list[dict]:
    events = json.loads(trace.read_text())["traceEvents"]
    return [e for e in events if e.get("ph") == "X" and e.get("name") == "scalar"]


def _kernel(tmp_path: Path, row: str) -> Path:
    path = tmp_path / "k.pto"
    path.write_text(KERNEL.replace("ROW", row))
    return path


def test_a_kernel_with_scalar_work_only_has_its_scalar_slice_in_the_trace(tmp_path):
    trace = tmp_path / "t.json"
    r = pyptoemu.run(_kernel(tmp_path, "%c0"), args={"arg1": 8}, data=False, trace=trace)
    slices = _scalar_slices(trace)
    assert [(s["ts"], s["ts"] + s["dur"]) for s in slices] == [(0, r.cycles)]  # was [] (no slice at all)
    assert r.pipes["S"].busy_cycles == r.cycles


def test_a_kernel_faulting_after_scalar_work_only_has_its_scalar_slice_up_to_the_fault(tmp_path):
    trace = tmp_path / "t.json"
    clean = pyptoemu.run(_kernel(tmp_path, "%c0"), args={"arg1": 8}, data=False)
    with pytest.raises(PtoError):  # the window starts at row 496 of an 8-row view
        pyptoemu.run(_kernel(tmp_path, "%s"), args={"arg1": 8}, data=False, trace=trace)
    slices = [(s["ts"], s["ts"] + s["dur"]) for s in _scalar_slices(trace)]
    # was [] (the span was left open): the loop and the views up to the faulting partition_view,
    # i.e. the clean run's work less the partition_view's own cycle
    assert slices == [(0, clean.cycles - 1)], slices


def test_a_kernel_with_scalar_work_only_is_bound_by_the_scalar_unit(tmp_path):
    r = pyptoemu.run(_kernel(tmp_path, "%c0"), args={"arg1": 8}, data=False)
    assert r.bound.startswith("issue-bound: 100% of the makespan is the scalar unit"), r.bound  # was 'no instructions ran'
    assert r.bound_pipe == "S"
