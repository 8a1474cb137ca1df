"""Timing fidelity: the emulator's predictions next to measured hardware figures.

    python benchmarks/timing_fidelity.py [--machine a2a3[:ALTERNATIVE]]

Per-instruction table: every calibration figure of shared/spec/machine-a2a3.md ("Calibration data
(measured)") rebuilt as a one-instruction kernel on one idle emulated core (benchmarks/calibration.py),
printed as predicted, measured and predicted / measured. Goal: every row within +-15%
(tests/emulator/core/test_calibration.py pins it).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from calibration import cases, measure

INSTRUCTION_TOLERANCE = 0.15


def instruction_table(machine: str) -> list:
    rows = cases()
    for case in rows:
        measure(case, machine)
    return rows


def print_instruction_table(rows: list) -> int:
    print(f"{'instruction':<20} {'shape':<44} {'predicted':>9} {'measured':>9} {'ratio':>6}  source")
    misses = 0
    for c in rows:
        flag = "" if abs(c.ratio - 1) <= INSTRUCTION_TOLERANCE else "  <-- outside +-15%"
        misses += bool(flag)
        print(f"{c.instruction:<20} {c.shape:<44} {c.predicted:>9.0f} {c.measured:>9.1f} {c.ratio:>6.2f}  "
              f"{c.source}{flag}")
    print(f"{len(rows) - misses} of {len(rows)} calibration figures within +-15%")
    return misses


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--machine", default="a2a3")
    ns = ap.parse_args()
    print(f"machine {ns.machine}: per-instruction calibration (one idle core)")
    print_instruction_table(instruction_table(ns.machine))


if __name__ == "__main__":
    main()
