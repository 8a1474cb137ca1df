"""Fifteenth red-team round: ``pyptoemu report`` with a ``--plot`` of an unknown suffix or a
``--csv``/``--plot`` that is a directory printed the whole report and then failed with exit 2 (read as
a report with a stray error); it now stops first, with nothing on stdout."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

import pyptoemu
from pyptoemu.cli import main
from tests.e2e.user_kernels.running import KERNELS

KERNEL = KERNELS / "r15_k05_tile_yielded_from_if_nosync.pto"


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def trace(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("r15") / "t.json"
    pyptoemu.run(KERNEL, args={"arg2": 16}, data=False, trace=path)
    return path


@pytest.mark.parametrize(("extra", "message"), [
    (["--plot", "t.gif"], "--plot t.gif: the timeline is written as .png, .svg or .pdf (the suffix says which), not .gif"),
    (["--plot", "timeline"], ("--plot timeline: the timeline is written as .png, .svg or .pdf (the suffix says which), "
     "not a file without a suffix")),
    (["--csv", "DIR"], "cannot write DIR: is a directory (--csv names the output file)"),
    (["--plot", "DIR.png"], "cannot write DIR.png: is a directory (--plot names the output file)"),
])
def test_a_report_that_cannot_be_written_stops_before_printing(tmp_path, trace, extra, message):
    (tmp_path / "DIR").mkdir()
    (tmp_path / "DIR.png").mkdir()
    extra = [str(tmp_path / e) if e.startswith("DIR") else e for e in extra]
    message = message.replace("DIR", str(tmp_path / "DIR"))
    code, out, err = _cli("report", str(trace), *extra)
    assert (code, out) == (2, ""), out  # was 2 after the whole report on stdout
    assert err == f"pyptoemu: {message}\n"
    assert "Traceback" not in err


def test_a_report_with_a_good_csv_still_prints_and_writes(tmp_path, trace):
    code, out, err = _cli("report", str(trace), "--csv", str(tmp_path / "l.csv"))
    assert (code, err) == (0, "")
    assert out.startswith("report ") and f"wrote {tmp_path / 'l.csv'}" in out
    assert (tmp_path / "l.csv").read_text().startswith("line,instructions,busy_cycles,blocked_cycles,pipes")
