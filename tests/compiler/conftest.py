"""Shared helpers for the compiler tests."""

from __future__ import annotations

import importlib.util
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(ROOT, "examples")
HERE = os.path.dirname(os.path.abspath(__file__))


def load_module(path: str):
    name = "pypto_test_" + os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def example(name: str):
    return load_module(os.path.join(EXAMPLES, name + ".py"))


def program_file(name: str):
    return load_module(os.path.join(HERE, "programs", name + ".py"))


def _emulator_ready() -> bool:
    try:
        import pyptoemu

        pyptoemu.run  # noqa: B018
        from pyptoemu.api import run  # noqa: F401
    except Exception:  # noqa: BLE001  (any import failure means: not available)
        return False
    return True


needs_emulator = pytest.mark.skipif(not _emulator_ready(), reason="pyptoemu.run is not available yet")
