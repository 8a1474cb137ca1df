"""The code stays ruff clean with the project's rule sets (pyproject: B and C90 with complexity <= 15)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(shutil.which("ruff") is None and not (Path(sys.executable).parent / "ruff").exists(),
                    reason="ruff is not installed (it comes with the [test] extra)")
def test_ruff_check_passes_on_the_whole_tree():
    res = subprocess.run([sys.executable, "-m", "ruff", "check", "."], cwd=ROOT, capture_output=True, text=True,
                         check=False)
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-2000:]
