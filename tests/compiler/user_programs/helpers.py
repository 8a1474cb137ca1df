"""Helpers for the user-style programs: load program files lazily, run them under both strategies."""

from __future__ import annotations

import importlib.util
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
STRATEGIES = ["Default", "PTOAS"]


def load_file(path: str, tag: str = ""):
    name = "user_programs_" + tag + os.path.relpath(path, HERE).replace(os.sep, "_").replace("/", "_")[:-3]
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


def normal(shape, dtype=np.float32, seed=0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def bad_findings(r) -> list:
    return [f for f in r.findings if "race" in getattr(f, "kind", "") or getattr(f, "severity", "") == "error"]


def check(program, args, want, strategy, entry=None, rtol=1e-5, atol=1e-6):
    """Run ``program``; under Default there must be no race/error finding; outputs must match ``want``."""
    from pypto.runtime import run

    r = run(program, *args, entry=entry, strategy=strategy)
    if strategy == "Default":
        assert not bad_findings(r), bad_findings(r)
    wants = want if isinstance(want, tuple) else (want,)
    assert len(r.outputs) == len(wants), (len(r.outputs), len(wants))
    for got, exp in zip(r.outputs, wants, strict=False):
        assert got.shape == exp.shape and got.dtype == exp.dtype, (got.shape, got.dtype, exp.shape, exp.dtype)
        np.testing.assert_allclose(got.astype(np.float64), exp.astype(np.float64), rtol=rtol, atol=atol)
    return r
