"""Helpers for the red-team compiler tests: load a program file lazily (a parse error fails the test,
not the collection) and run it under both strategies."""

from __future__ import annotations

import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def load_file(path: str):
    name = "redteam_" + os.path.relpath(path, HERE).replace(os.sep, "_")[:-3]
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    try:
        spec.loader.exec_module(mod)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return mod


def prog(name: str, cls: str):
    return getattr(load_file(os.path.join(HERE, "progs", name + ".py")), cls)
