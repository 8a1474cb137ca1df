"""pytest plugin: the ``emulator`` fixture and the ``--pyptoemu-machine`` option.

Loaded automatically where pyptoemu is installed (entry point ``pytest11``), or with
``pytest_plugins = ["pyptoemu.testing.plugin"]`` in a conftest. The fixture runs kernels on the
chosen machine and writes each run's trace into the test's ``tmp_path``, so a failing comparison
names a trace to open in Perfetto.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from pyptoemu.api import run
from pyptoemu.testing import Reference, assert_kernel_matches


class Emulator:
    """What the ``emulator`` fixture gives a test: ``run`` and ``assert_matches`` with traces kept."""

    def __init__(self, machine: str, trace_dir: Path):
        self.machine = machine
        self.trace_dir = trace_dir
        self.runs = 0

    def _trace(self, kernel: Any) -> Path:
        self.runs += 1
        stem = Path(os.fspath(kernel)).stem if isinstance(kernel, (str, os.PathLike)) and "\n" not in str(kernel) \
            else "kernel"
        return self.trace_dir / f"{stem}_{self.runs}.json"

    def run(self, kernel: Any, **options: Any):
        options.setdefault("machine", self.machine)
        options.setdefault("trace", self._trace(kernel))
        return run(kernel, **options)

    def assert_matches(self, kernel: Any, reference: Reference, **options: Any):
        options.setdefault("machine", self.machine)
        options.setdefault("trace", self._trace(kernel))
        return assert_kernel_matches(kernel, reference, **options)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--pyptoemu-machine", default="a2a3",
                     help="machine the `emulator` fixture runs kernels on (default a2a3)")


@pytest.fixture
def emulator(request: pytest.FixtureRequest, tmp_path: Path) -> Emulator:
    """Run kernels on the emulator; each run's trace goes to the test's tmp_path."""
    return Emulator(request.config.getoption("--pyptoemu-machine"), tmp_path)
