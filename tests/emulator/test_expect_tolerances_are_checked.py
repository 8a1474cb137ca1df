"""``--rtol``/``--atol`` of ``--expect`` must be finite and non-negative: a NaN or negative tolerance
fails every comparison, so a kernel whose output equals the reference was reported as a mismatch
(exit 1, as if the kernel were wrong); it is bad input (exit 2)."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import numpy as np
import pytest

from pyptoemu.cli import main

VADD = Path(__file__).resolve().parents[2] / "examples" / "vadd_32x32.pto"


def _run(tmp_path, *extra: str) -> tuple[int, str]:
    a = np.ones((32, 32), np.float32)
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "want.npy", a + a)
    argv = ["run", "-q", str(VADD), "--input", f"arg0={tmp_path / 'a.npy'}", "--input", f"arg1={tmp_path / 'a.npy'}",
            "--expect", f"arg2={tmp_path / 'want.npy'}", "--output-dir", str(tmp_path / "out"), *extra]
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(argv)
    return code, err.getvalue()


@pytest.mark.parametrize(("flag", "value"), [("--rtol", "nan"), ("--rtol", "-1"), ("--atol", "-1e-9"),
                                             ("--atol", "inf")])
def test_a_tolerance_that_no_comparison_can_meet_is_bad_input(tmp_path, flag, value):
    code, err = _run(tmp_path, f"{flag}={value}")
    assert code == 2 and f"{flag} must be a finite non-negative number" in err


def test_zero_tolerances_accept_an_exact_result(tmp_path):
    assert _run(tmp_path, "--rtol", "0", "--atol", "0")[0] == 0
