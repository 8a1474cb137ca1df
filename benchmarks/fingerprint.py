"""Fingerprint every `.pto` in the repository: cycles, output hashes, findings, or the error.

Why: refactors of the emulator must leave outputs and cycles bit-identical. Record before, record
after, compare:

    python benchmarks/fingerprint.py > /tmp/before.json
    ... refactor ...
    python benchmarks/fingerprint.py > /tmp/after.json && diff /tmp/before.json /tmp/after.json

Scalar arguments the kernel needs get a few fixed values (each run is one line), so kernels with
scalar arguments are covered too. Errors are part of the fingerprint (their class and message).

Besides what a user sees (cycles, outputs, findings, the bound text), each kernel is run a second
time without data (``data=False``) keeping its log, and the whole schedule is hashed: every recorded
instruction's pipe, name, issue, wait start, start, end and completion, in (start, program order)
(program order as a rank: see :func:`schedule_hash`).
A change in how the simulator gets to its schedule (which process runs when, what is cached) must
leave that hash alone, not only the total cycles.
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


def schedule_hash(result) -> str:
    """One hash of every recorded instruction's timing on every core (needs ``keep_log=True``).

    Program order enters as each instruction's rank among its core's ``iseq`` values, not as the
    values themselves: only the order is behaviour (races and block boundaries compare ``iseq``,
    nothing shows it), so a numbering that keeps every order (a stall taking no number of its own)
    leaves the hash alone."""
    h = hashlib.sha256()
    for core in result.chip.cores:
        log = core.trace_log
        rank = {iseq: k for k, iseq in enumerate(sorted({i.iseq for i in log}))}
        rows = sorted((i.start, rank[i.iseq], i.pipe, i.name, i.issue, i.wait_start, i.end, i.done) for i in log)
        h.update(repr(rows).encode())
    return h.hexdigest()[:16]


def timing_only(path: Path, args: dict) -> dict:
    """The run without data: its cycles, bound and schedule (or its error)."""
    try:
        r = pyptoemu.run(str(path), args=args, races="warn", data=False, keep_log=True)
    except FindingsError as e:
        r = e.result
    except PtoError as e:
        return {"error": type(e).__name__, "message": str(e)}
    except Exception as e:  # noqa: BLE001 - a fingerprint records whatever happens
        return {"crash": type(e).__name__, "message": str(e)[:300]}
    return {"cycles": r.cycles, "bound": r.bound, "bound_pipe": r.bound_pipe,
            "findings": [str(f) for f in r.findings], "schedule": schedule_hash(r)}


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
            "sync": r.sync_mode, "printed": r.printed, "bound": r.bound, "bound_pipe": r.bound_pipe,
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
            out[key]["timing_only"] = timing_only(p, args)
            print(key, file=sys.stderr)
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    print()


if __name__ == "__main__":
    main()
