"""The cores of one kind on a chip share their tile-op bindings: each op's operand shapes are
checked and timed once per kind, not once per core, and the results do not change."""

from __future__ import annotations

from pathlib import Path

import numpy as np

import pyptoemu
from ptoisa.text import ast as A
from pyptoemu.api import load_kernel
from pyptoemu.core.tileop import TileOpBinding

VADD = Path(__file__).resolve().parents[3] / "examples" / "vadd_32x32.pto"


def _count_checks(monkeypatch) -> list:
    calls: list = []
    original = TileOpBinding._check_and_time

    def counted(self, in_snap, out_snap):
        calls.append(self.op)
        return original(self, in_snap, out_snap)

    monkeypatch.setattr(TileOpBinding, "_check_and_time", counted)
    return calls


def _fresh() -> A.Module:
    """VADD parsed anew: a module given as such is bound from scratch (a text run before would
    reuse its earlier runs' bindings, api._Prepared)."""
    return load_kernel(VADD)


def test_sixteen_cores_check_and_time_each_op_once(monkeypatch):
    calls = _count_checks(monkeypatch)
    one = pyptoemu.run(_fresh(), races="off")
    once = len(calls)
    calls.clear()
    many = pyptoemu.run(_fresh(), races="off", blocks=16)
    assert len(many.chip.cores) == 16
    assert len(calls) == once  # not 16 times as many
    for c in many.chip.cores[1:]:  # each core runs the ops on its own scalar unit and memories
        for op, step in c.scalar.steps.items():
            binding = getattr(step, "__self__", None)
            if isinstance(binding, TileOpBinding):
                first = many.chip.cores[0].scalar.steps[op].__self__
                assert binding is not first and binding.timing_cache is first.timing_cache
                assert binding.su is c.scalar and binding.memory is c.memory
    assert many.cycles == one.cycles
    np.testing.assert_array_equal(many.outputs["arg2"], one.outputs["arg2"])


def test_timing_only_cores_share_the_shape_checks(monkeypatch):
    calls = _count_checks(monkeypatch)
    pyptoemu.run(_fresh(), races="off", data=False)
    once = len(calls)
    calls.clear()
    pyptoemu.run(_fresh(), races="off", data=False, blocks=8)
    assert len(calls) == once


def test_a_repeated_run_of_a_text_binds_checks_and_times_nothing_again(monkeypatch, tmp_path):
    """pyptoemu.run keeps the binding templates of a kernel text per ISA and machine: a second run
    of the same file checks and times no shape again and gives the very same result; another
    machine has its own; the templates hold nothing of a run (no scalar unit, memory or tile)."""
    kernel = tmp_path / "vadd.pto"
    kernel.write_text(VADD.read_text())
    calls = _count_checks(monkeypatch)
    first = pyptoemu.run(kernel, races="off")
    assert calls  # the first run checked and timed its tile ops
    calls.clear()
    again = pyptoemu.run(kernel, races="off", blocks=2)
    assert calls == []
    fresh = pyptoemu.run(_fresh(), races="off", blocks=2)
    assert again.cycles == fresh.cycles and first.cycles == pyptoemu.run(_fresh(), races="off").cycles
    assert [str(f) for f in again.findings] == [str(f) for f in fresh.findings]
    np.testing.assert_array_equal(again.outputs["arg2"], fresh.outputs["arg2"])
    templates = list(again.chip.bindings.values())
    assert templates and all(t.su is None and t.memory is None and t.last_tiles == [] and t.template is None
                             and t.last_result == () for t in templates)
    calls.clear()
    other = pyptoemu.run(kernel, races="off", machine="a2a3:ptoisa_cost_model")
    assert calls  # checked and timed on that machine's figures
    assert other.cycles == pyptoemu.run(_fresh(), races="off", machine="a2a3:ptoisa_cost_model").cycles
    assert other.cycles != again.cycles
