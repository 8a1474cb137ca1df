"""The progress bar: drawn from a watcher thread (no hook in the simulation loop), only for runs that
outlast the delay, closed when the run ends; the CLI asks for it only on a terminal's stderr."""

from __future__ import annotations

import io
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

from pyptoemu.progress import ProgressMonitor

ROOT = Path(__file__).resolve().parents[2]


class FakeBar:
    def __init__(self, **options):
        self.options = options
        self.n = 0
        self.postfix = ""
        self.closed = False

    def update(self, k):
        self.n += k

    def set_postfix_str(self, text, refresh=True):
        self.postfix = text

    def close(self):
        self.closed = True


def _core(now: int, count: int):
    return SimpleNamespace(env=SimpleNamespace(now=now), scalar=SimpleNamespace(count=count),
                           pipes={"V": SimpleNamespace(count=count)})


def test_a_long_run_shows_cycles_and_instructions_then_closes():
    bars = []
    core = _core(0, 0)
    with ProgressMonitor(core, io.StringIO(), lambda **kw: bars.append(FakeBar(**kw)) or bars[-1],
                         delay=0.0, interval=0.01):
        deadline = time.monotonic() + 30
        while not bars and time.monotonic() < deadline:  # the watcher thread draws the bar
            time.sleep(0.01)
        core.env.now, core.scalar.count, core.pipes["V"].count = 1234, 5, 7
    (bar,) = bars
    assert bar.n == 1234 and bar.postfix == "12 instructions" and bar.closed
    assert bar.options["total"] is None and bar.options["leave"] is False


def test_a_short_run_never_draws():
    bars = []
    with ProgressMonitor(_core(0, 0), io.StringIO(), lambda **kw: bars.append(kw), delay=5.0):
        pass
    assert bars == []


def test_piped_stderr_gets_no_bar(tmp_path):
    r = subprocess.run([sys.executable, "-m", "pyptoemu", "run", str(ROOT / "examples" / "vadd_32x32.pto"),
                        "--output-dir", str(tmp_path)], capture_output=True, text=True, check=False)
    assert r.returncode == 0 and "simulating" not in r.stderr and "\r" not in r.stderr
