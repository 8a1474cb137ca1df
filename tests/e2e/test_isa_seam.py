"""The seam between the ISA specs and both programs: an instruction added as YAML alone (in a copy of
``isa_specs/``, selected with ``PYPTOEMU_ISA_DIR``) runs on the emulator and shows up in the
compiler's op table with its pipe, dtypes and C++ spelling, with no Python edit."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

import pyptoemu
from ptoisa.isa.loader import load_isa
from pypto.dtype import DataType
from pypto.enums import PipeType
from pypto.ops import isa as compiler_isa

ROOT = Path(__file__).resolve().parents[2]
VADD = ROOT / "examples" / "vadd_32x32.pto"

# tadd's semantics key under a new name, with a timing, pipe and C++ spelling of its own.
NEW_FAMILY = """\
family: seam
description: An instruction that exists only in this test's copy of the specs.
instructions:
  - mnemonic: taddseam
    description: "d = a + b, f16 and f32 only"
    ins:
      - {name: a, kind: tile, locs: [vec]}
      - {name: b, kind: tile, locs: [vec]}
      - {name: tmp, kind: tile, locs: [vec], optional: true, role: scratch}
    outs:
      - {name: dst, kind: tile, locs: [vec]}
    dtypes: [f16, f32]
    pipe: V
    domain: dst
    timing:
      occupancy: "700 + bytes // 512"
      latency: "800 + bytes // 512"
    semantics: binary_add
    implemented: true
    cpp: TADD_SEAM
"""


@pytest.fixture
def seam_specs(tmp_path, monkeypatch):
    """A copy of isa_specs/ with one more family file, selected for this test."""
    specs = tmp_path / "isa_specs"
    shutil.copytree(ROOT / "isa_specs", specs)
    (specs / "instructions" / "seam.yaml").write_text(NEW_FAMILY)
    monkeypatch.setenv("PYPTOEMU_ISA_DIR", str(specs))
    return specs


def test_the_default_specs_do_not_have_the_new_instruction():
    assert "taddseam" not in load_isa(ROOT / "isa_specs" / "instructions")


def test_emulator_runs_an_instruction_that_is_only_yaml(seam_specs, tmp_path, monkeypatch):
    kernel = tmp_path / "vadd_seam.pto"
    kernel.write_text(VADD.read_text().replace("pto.tadd ins(", "pto.taddseam ins("))
    rng = np.random.default_rng(3)
    x, y = (rng.standard_normal((32, 32)).astype(np.float32) for _ in range(2))
    seam = pyptoemu.run(kernel, inputs={"arg0": x, "arg1": y})
    np.testing.assert_array_equal(seam.outputs["arg2"], x + y)
    assert seam.pipes["V"].instructions == 1
    # the timing is the YAML's: 1000 more cycles of occupancy keep the V pipe 1000 cycles longer
    slower = tmp_path / "slower_specs"
    shutil.copytree(seam_specs, slower)
    (slower / "instructions" / "seam.yaml").write_text(NEW_FAMILY.replace('"700 + ', '"1700 + '))
    monkeypatch.setenv("PYPTOEMU_ISA_DIR", str(slower))
    again = pyptoemu.run(kernel, inputs={"arg0": x, "arg1": y})
    np.testing.assert_array_equal(again.outputs["arg2"], x + y)
    assert again.pipes["V"].busy_cycles - seam.pipes["V"].busy_cycles == 1000


def test_compiler_op_table_reports_the_new_instruction(seam_specs):
    facts = compiler_isa.describe("taddseam")
    assert facts.pipes == (PipeType.V,)
    assert facts.dtypes == (DataType.FP16, DataType.FP32)
    assert facts.cpp == "TADD_SEAM"
    assert facts.scratch == ("tmp",)


def test_an_edit_of_an_existing_entry_reaches_the_compiler_type_check(seam_specs):
    """Dropping f16 from texp in the YAML alone makes the compiler reject an FP16 exp."""
    path = seam_specs / "instructions" / "unary.yaml"
    text = path.read_text()
    start = text.index("- mnemonic: texp\n")
    entry_end = text.index("- mnemonic:", start + 1)
    entry = text[start:entry_end]
    dtypes_line = next(line for line in entry.splitlines() if line.strip().startswith("dtypes:"))
    path.write_text(text[:start] + entry.replace(dtypes_line, dtypes_line.split(":")[0] + ": [f32]")
                    + text[entry_end:])
    assert compiler_isa.legal_dtypes("block.exp") == (DataType.FP32,)
