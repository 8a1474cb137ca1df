"""Automatic synchronisation of a kernel written in the MLIR generic form (``"pto.tload"(%v, %t) :
(...) -> ()``, what ``--mlir-print-op-generic`` prints): the planner read such ops as unmodelled and
fenced each with a full barrier before and after (two back to back between every pair of ops), so the
'auto' run was slower than the 'serial' reference it must never exceed (945 against 860 cycles). The
generic operands are now split by the op's declared order, as the emulator itself reads them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pyptoemu
from ptoisa.isa.loader import load_isa
from ptoisa.machine import load_machine
from ptoisa.sync.pto_text import insert_sync
from ptoisa.text.parser import parse_file

KERNELS = Path(__file__).resolve().parents[3] / "tests" / "e2e" / "user_kernels" / "kernels"


@pytest.mark.parametrize("name", ["k64_generic_leaky_relu_select.pto", "k36_generic_form_tadd.pto"])
def test_generic_form_kernels_get_flags_not_fences_and_auto_beats_serial(name):
    mach = load_machine("a2a3")
    _, stats = insert_sync(parse_file(KERNELS / name), load_isa(machine=mach), mach)
    assert stats.fences == 0 and stats.pairs >= 1
    auto = pyptoemu.run(KERNELS / name, data=False, sync="auto").cycles
    serial = pyptoemu.run(KERNELS / name, data=False, sync="serial").cycles
    assert auto < serial


def test_generic_form_select_still_matches_its_serial_run():
    name = KERNELS / "k64_generic_leaky_relu_select.pto"
    x = np.random.default_rng(0).standard_normal((16, 64)).astype(np.float32)
    auto = pyptoemu.run(name, inputs={"arg0": x}, sync="auto")
    serial = pyptoemu.run(name, inputs={"arg0": x}, sync="serial")
    assert not auto.findings
    np.testing.assert_array_equal(auto.outputs["arg1"], serial.outputs["arg1"])
