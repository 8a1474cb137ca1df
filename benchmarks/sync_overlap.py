"""Overlap kept by automatic synchronisation: for every example with hand-written sync, the
simulated cycles with that sync (``asis``), with it stripped and re-inserted (``auto``) and in
program order (``serial``). auto / hand near 1.0 means the inserted sync keeps the pipelines'
overlap (a double-buffered loop still loads while it computes); serial / hand shows what
ordering everything would cost.

    python benchmarks/sync_overlap.py
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pyptoemu

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _reference():
    spec = importlib.util.spec_from_file_location("example_reference", EXAMPLES / "reference.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["example_reference"] = mod
    spec.loader.exec_module(mod)
    return mod


def main() -> None:
    ref = _reference()
    print(f"{'kernel':30s} {'hand':>9s} {'auto':>9s} {'serial':>9s} {'auto/hand':>10s} {'serial/hand':>12s}")
    for name in sorted(ref.INPUTS):
        if ref.SYNC[name] != "explicit":
            continue
        inputs, args = ref.make_inputs(name, seed=1), ref.ARGS.get(name, {})
        cycles = [pyptoemu.run(EXAMPLES / name, inputs=inputs, args=args, sync=mode).cycles
                  for mode in ("asis", "auto", "serial")]
        hand, auto, serial = cycles
        print(f"{name:30s} {hand:9d} {auto:9d} {serial:9d} {auto / hand:10.3f} {serial / hand:12.2f}")


if __name__ == "__main__":
    main()
