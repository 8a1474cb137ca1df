"""The ``pyptoemu`` command joins the two packages; the emulator alone never imports the compiler."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _python(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], check=False, capture_output=True, text=True, cwd=cwd,
                          timeout=300)


def test_compile_subcommand_writes_pto_and_cpp(tmp_path):
    out = tmp_path / "softmax"
    r = _python("-m", "pyptocli", "compile", str(ROOT / "examples" / "row_softmax.py"), "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert (out / "kernels" / "aiv" / "softmax_rows.pto").read_text().startswith("module")
    assert (out / "kernels" / "aiv" / "softmax_rows.cpp").exists()


def test_python_dash_m_pyptoemu_is_the_installed_command_with_compile(tmp_path):
    """``python -m pyptoemu`` runs the installed ``pyptoemu`` script (README: the same command line)."""
    out = tmp_path / "softmax"
    r = _python("-m", "pyptoemu", "compile", str(ROOT / "examples" / "row_softmax.py"), "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert (out / "kernels" / "aiv" / "softmax_rows.pto").read_text().startswith("module")


def test_emulator_subcommands_still_answer_through_the_joined_command():
    r = _python("-m", "pyptocli", "isa", "show", "TADD")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("pto.tadd")


def test_emulator_command_line_loads_no_compiler_module():
    probe = ("import sys, pyptoemu.cli, pyptoemu.api; "
             "print(sorted(m for m in sys.modules if m == 'pypto' or m.startswith('pypto.')))")
    r = _python("-c", probe)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"


def test_emulator_command_line_alone_has_no_compile():
    r = _python("-m", "pyptoemu.cli", "compile", "x.py")
    assert r.returncode == 2
    assert "invalid choice: 'compile'" in r.stderr
