"""Shared fixtures: paths to the repository's examples and the NumPy references."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
from hypothesis import settings

# Reproducible property tests: fixed seeds everywhere, no wall-clock deadlines (simulator runs vary).
settings.register_profile("repo", derandomize=True, deadline=None, print_blob=True)
settings.load_profile("repo")

# The `emulator` fixture users get from pyptoemu's pytest plugin (the project's tests use it too).
pytest_plugins = ["pyptoemu.testing.plugin"]

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


def _load_reference():
    spec = importlib.util.spec_from_file_location("example_reference", EXAMPLES / "reference.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["example_reference"] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="session")
def reference():
    return _load_reference()


@pytest.fixture(scope="session")
def examples_dir() -> Path:
    return EXAMPLES
