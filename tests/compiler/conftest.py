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


# ----------------------------------------------------------------------------- one-kernel DSL programs

_DSL_DIR: list[str] = []


def dsl_program(body: str, inputs: dict, out: tuple, header: str = ""):
    """A one-kernel ``@pl.program`` built from DSL source text (the parser reads functions from files).

    ``inputs`` maps parameter names to ``(shape, "FP32")``; ``out`` is the output tensor's
    ``(shape, dtype)``. ``body`` is the kernel body (4-space relative indentation) and must leave the
    result tile in ``r``, which is stored at the origin of the output tensor ``o``.
    """
    import hashlib
    import tempfile
    import textwrap

    def ty(shape, dtype):
        return f"pl.Tensor[[{', '.join(str(d) for d in shape)}], pl.{dtype}]"

    params = ", ".join(f"{n}: {ty(*spec)}" for n, spec in inputs.items())
    lines = textwrap.indent(textwrap.dedent(body).strip("\n"), " " * 8)
    src = (
        "import pypto.language as pl\n\n" + header + "\n\n@pl.program\nclass P:\n"
        "    @pl.function(type=pl.FunctionType.InCore)\n"
        f"    def k(self, {params}, o: pl.Out[{ty(*out)}]) -> {ty(*out)}:\n"
        f"{lines}\n"
        "        return pl.store(r, [0] * " + str(len(out[0])) + ", o)\n"
    ).replace("[0] * 1,", "[0],").replace("[0] * 2,", "[0, 0],").replace("[0] * 3,", "[0, 0, 0],")
    if not _DSL_DIR:
        _DSL_DIR.append(tempfile.mkdtemp(prefix="pypto_dsl_"))
    path = os.path.join(_DSL_DIR[0], "k_" + hashlib.sha1(src.encode()).hexdigest()[:16] + ".py")
    if not os.path.exists(path):
        with open(path, "w") as f:
            f.write(src)
    return load_module(path).P


def errors(result) -> list:
    """Findings that make a run wrong: errors (races included)."""
    return [f for f in result.findings if getattr(f, "severity", "") == "error" or "race" in getattr(f, "kind", "")]
