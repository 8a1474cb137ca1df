"""Fingerprint every `.pto` in the repository: cycles, output hashes, findings, or the error.

Why: refactors of the emulator must leave outputs and cycles bit-identical. Record before, record
after, compare:

    python benchmarks/fingerprint.py > /tmp/before.json
    ... refactor ...
    python benchmarks/fingerprint.py > /tmp/after.json && diff /tmp/before.json /tmp/after.json

Scalar arguments the kernel needs get a few fixed values (each run is one line), so kernels with
scalar arguments are covered too. Errors are part of the fingerprint (their class and message).
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import numpy as np

import pyptoemu
from ptoisa.text import ast as A
from pyptoemu.api import choose_entry, load_kernel
from pyptoemu.errors import FindingsError, PtoError

ROOT = Path(__file__).resolve().parent.parent
SCALAR_VALUES = {"i1": (True, False), "f": (1.5,), "i": (1, 3, 17)}


def _scalar_choices(path: Path) -> list[dict]:
    """One args dict per run: every scalar argument of the entry takes each of a few values."""
    try:
        module = load_kernel(str(path))
        fn = choose_entry(module, None)
    except PtoError:
        return [{}]
    names = [(f"arg{i}", t.name) for i, t in enumerate(fn.arg_types) if isinstance(t, A.ScalarType)]
    if not names:
        return [{}]
    runs = []
    for k in range(3):
        args = {}
        for name, tname in names:
            key = "i1" if tname == "i1" else ("f" if tname.startswith(("f", "bf")) else "i")
            vals = SCALAR_VALUES[key]
            args[name] = vals[k % len(vals)]
        runs.append(args)
    return runs


def fingerprint(path: Path, args: dict) -> dict:
    try:
        r = pyptoemu.run(str(path), args=args, races="warn")
    except FindingsError as e:  # the run completed with error findings (a double set): its result
        r = e.result
    except PtoError as e:
        return {"error": type(e).__name__, "message": str(e)}
    except Exception as e:  # noqa: BLE001 - a fingerprint records whatever happens
        return {"crash": type(e).__name__, "message": str(e)[:300]}
    outs = {k: hashlib.sha256(np.ascontiguousarray(v).tobytes()).hexdigest()[:16]
            for k, v in sorted(r.outputs.items())}
    return {"cycles": r.cycles, "outputs": outs, "findings": [str(f) for f in r.findings],
            "sync": r.sync_mode, "printed": r.printed,
            "pipes": {k: [v.busy_cycles, v.instructions] for k, v in r.pipes.items()}}


def main() -> None:
    roots = [ROOT / "examples", ROOT / "tests"]
    paths = sorted(p for r in roots for p in r.rglob("*.pto"))
    out = {}
    for p in paths:
        rel = str(p.relative_to(ROOT))
        for args in _scalar_choices(p):
            key = rel + ("" if not args else " " + json.dumps(args, sort_keys=True))
            out[key] = fingerprint(p, args)
            print(key, file=sys.stderr)
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    print()


if __name__ == "__main__":
    main()
