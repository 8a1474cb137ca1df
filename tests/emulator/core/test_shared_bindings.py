"""The cores of one kind on a chip share their tile-op bindings: each op's operand shapes are
checked and timed once per kind, not once per core, and the results do not change."""

from __future__ import annotations

from pathlib import Path

import numpy as np

import pyptoemu
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


def test_sixteen_cores_check_and_time_each_op_once(monkeypatch):
    calls = _count_checks(monkeypatch)
    one = pyptoemu.run(VADD, races="off")
    once = len(calls)
    calls.clear()
    many = pyptoemu.run(VADD, races="off", blocks=16)
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
    pyptoemu.run(VADD, races="off", data=False)
    once = len(calls)
    calls.clear()
    pyptoemu.run(VADD, races="off", data=False, blocks=8)
    assert len(calls) == once
