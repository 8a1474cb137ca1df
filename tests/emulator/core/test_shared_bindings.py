"""The cores of one kind on a chip share their tile-op bindings: each op's operand shapes are
checked and timed once per kind, not once per core, and the results do not change."""

from __future__ import annotations

import re
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest

import pyptoemu
from ptoisa.text import ast as A
from pyptoemu import api
from pyptoemu.api import load_kernel
from pyptoemu.core import aicore
from pyptoemu.core.chip import Chip
from pyptoemu.core.scalar import ScalarUnit
from pyptoemu.core.tileop import TileOpBinding
from pyptoemu.errors import VerifyError

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
    templates = list(again.chip.bindings.tile_ops.values())
    assert templates and all(t.su is None and t.memory is None and t.last_tiles == [] and t.template is None
                             and t.last_result == () for t in templates)
    calls.clear()
    other = pyptoemu.run(kernel, races="off", machine="a2a3:ptoisa_cost_model")
    assert calls  # checked and timed on that machine's figures
    assert other.cycles == pyptoemu.run(_fresh(), races="off", machine="a2a3:ptoisa_cost_model").cycles
    assert other.cycles != again.cycles


EXAMPLES = sorted((VADD.parent).glob("*.pto"))


def _how_to_run(path: Path) -> dict:
    """The blocks and scalar arguments the example's ``// Run:`` line gives it (1 for a scalar it
    does not give)."""
    run_line = re.search(r"^// Run: (.*)$", path.read_text(), re.MULTILINE)
    words = run_line.group(1).split() if run_line else []
    kw: dict = {"args": {}}
    for flag, value in pairwise(words):
        if flag == "--blocks":
            kw["blocks"] = int(value)
        elif flag == "--arg":
            name, _, v = value.partition("=")
            kw["args"][name] = v
    fn = api.choose_entry(load_kernel(path), None)
    for i, t in enumerate(fn.arg_types):
        if isinstance(t, A.ScalarType):
            kw["args"].setdefault(f"arg{i}", "1")
    return kw


def _outcome(kernel, **kw) -> tuple:
    """What a run gives, faulted or not: cycles, bound, findings, outputs."""
    try:
        res = pyptoemu.run(kernel, races="warn", **kw)
    except api.KernelFault as e:
        res = e.result
    return (res.cycles, res.bound, [str(f) for f in res.findings],
            {k: v.tobytes() for k, v in res.outputs.items()})


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_a_text_run_again_binds_as_a_fresh_module_without_looking_up_a_lowering(path, tmp_path, monkeypatch):
    """The lowerings a run of a text keeps per core kind (binding.SharedBinds) bind as a fresh
    module does, on every example (the cube/vector splits bind the other side's ops as no-ops on
    each kind of core): the same cycles, bound, findings and outputs, with no lowering looked up
    again by the second run."""
    kernel = tmp_path / path.name
    kernel.write_text(path.read_text())
    how = _how_to_run(path)
    first = _outcome(kernel, **how)
    looked_up: list = []
    original = aicore.lowering_of
    monkeypatch.setattr(aicore, "lowering_of", lambda op, *a: looked_up.append(op) or original(op, *a))
    again = _outcome(kernel, **how)
    assert looked_up == []
    assert again == first == _outcome(load_kernel(kernel), **how)


def test_an_op_that_cannot_be_bound_fails_with_a_new_error_on_each_core():
    """A lowering that cannot be found is not kept: each binding raises its own error (one raised
    again would carry the tracebacks of every earlier raise)."""
    module = load_kernel(VADD)
    op = A.Op(name="pto.tnotanop", loc=module.functions[0].loc)
    mach, isa = api._machine_and_isa("a2a3")
    errors = []
    for _ in range(2):
        core = aicore.AICore(module, isa, mach)
        step = core._bind(core.scalar, op)
        with pytest.raises(VerifyError, match="not an op of the PTO dialect") as e:
            step({})
        errors.append(e.value)
        assert core.lowerings == {}
    assert errors[0] is not errors[1]


def test_a_binding_copy_is_a_new_binding_sharing_every_slot():
    """TileOpBinding._copy (a generated copier, tileop._slot_copier) copies every slot as is."""
    res = pyptoemu.run(_fresh(), races="off", blocks=2)
    bindings = [step.__self__ for c in res.chip.cores for step in c.scalar.steps.values()
                if isinstance(getattr(step, "__self__", None), TileOpBinding)]
    bindings += list(res.chip.bindings.tile_ops.values())
    assert bindings
    for b in bindings:
        copy = b._copy()
        assert type(copy) is TileOpBinding and copy is not b
        for name in TileOpBinding.__slots__:
            assert getattr(copy, name) is getattr(b, name), name


def test_the_lowerings_kept_for_later_runs_hold_nothing_of_a_run(tmp_path):
    """What binding.SharedBinds keeps across runs closes over no core, scalar unit or chip."""
    kernel = tmp_path / "vadd.pto"
    kernel.write_text(VADD.read_text())
    res = pyptoemu.run(kernel, races="off", blocks=2)
    lowerings = list(res.chip.bindings.lowerings.values())
    assert lowerings
    for lowering in lowerings:
        held = [*getattr(lowering, "args", ()), *getattr(lowering, "keywords", {}).values()]
        held += [c.cell_contents for c in getattr(lowering, "__closure__", None) or ()]
        assert not [x for x in held if isinstance(x, (aicore.AICore, ScalarUnit, Chip))], lowering
