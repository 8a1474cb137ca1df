"""run() finds a machine named by name once per spec directory (api._machine_and_isa): the very
machine and ISA load_machine/load_isa give, another directory's when PYPTOEMU_ISA_DIR changes, and a
machine file path looked up each time."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyptoemu
from ptoisa.machine import isa_dir, load_machine
from pyptoemu import api
from pyptoemu.isa.runnable import load_isa

VADD = Path(__file__).resolve().parents[2] / "examples" / "vadd_32x32.pto"


def test_a_name_gives_what_load_machine_and_load_isa_give():
    for name in ("a2a3", "a5"):
        mach, isa = api._machine_and_isa(name)
        assert mach is load_machine(name) and isa is load_isa(machine=mach)
        assert api._machine_and_isa(name) == (mach, isa)


def test_another_spec_directory_is_another_machine(tmp_path, monkeypatch):
    specs = tmp_path / "isa_specs"
    shutil.copytree(isa_dir(), specs)
    yaml = specs / "machines" / "a2a3.yaml"
    yaml.write_text(yaml.read_text().replace("clock_ghz: 1.85", "clock_ghz: 0.925"))
    default = pyptoemu.run(VADD, data=False)
    monkeypatch.setenv("PYPTOEMU_ISA_DIR", str(specs))
    slower = pyptoemu.run(VADD, data=False)
    assert slower.cycles == default.cycles and slower.time_us == 2 * default.time_us
    monkeypatch.delenv("PYPTOEMU_ISA_DIR")
    assert pyptoemu.run(VADD, data=False).time_us == default.time_us


def test_a_machine_file_path_is_not_kept(tmp_path):
    path = tmp_path / "m.yaml"
    shutil.copy(isa_dir() / "machines" / "a2a3.yaml", path)
    mach, _ = api._machine_and_isa(str(path))
    assert mach.name == "a2a3" and (str(path), None) not in api._MACHINES
