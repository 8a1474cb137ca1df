"""Timing fidelity: the emulator's predictions next to measured hardware figures.

    python benchmarks/timing_fidelity.py [--machine a2a3[:ALTERNATIVE]] [--no-workloads]

Whole workloads: the published whole-chip timings of shared/spec/machine-a2a3.md run on the
emulated chip (benchmarks/kernels), timing only (data=False: the schedule and cycles are those of a
run with data). Predicted time = the run's time on hardware (``RunResult.hardware_cycles``): its
makespan, which holds the block dispatch of any wave after the first, plus launch_kernel and the
first wave's launch_block (machine params, from pto-isa's flash-attention cost model). Goal: each within +-25%, and the copy's tile-size trend
1 : 1.08 : 2.62 within +-25% per step. Figures (a2a3): add 1 core 1.16, 48 cores 1.06; copy 0.98 /
0.90 / 0.96 (trend 1 : 1.00 : 2.57); GEMM 1536 / 3072 / 6144 0.90 / 1.03 / 1.16; flash attention
S0=128, S1=8192, d=128 on one core group (1 AIC + 2 AIV through an l2g2l FIFO) 1.05 (1.52 with
128-key softmax steps and an f32 P path, 1.90 before the cube ran ahead), bound by the vector
cores' V pipes (see benchmarks/kernels/flash_attention.py for the per-pipe breakdown). The whole table
takes a few minutes (the 6144^3 GEMM is ~1M instructions).

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
from kernels.flash_attention import flash_attention_kernel
from kernels.gemm import gemm_kernel
from kernels.streams import add_kernel, copy_kernel

import pyptoemu
from ptoisa.machine import load_machine

INSTRUCTION_TOLERANCE = 0.15
WORKLOAD_TOLERANCE = 0.25
# (name, kernel text, blocks, published us, source row of the spec)
WORKLOADS = (
    ("add 8192^2 fp16, 1 core", lambda: add_kernel(tr=1, tc=8192), 1, 6909.6, "add, same, 1 core"),
    ("add 8192^2 fp16, 48 cores", lambda: add_kernel(tr=1, tc=8192), 48, 264.0, "add, 48 vector cores"),
    ("copy 12288^2 fp16, 128 KiB tiles", lambda: copy_kernel(12288, 131072, 131072), 48, 215.8, "GM -> UB copy"),
    ("copy 12288^2 fp16, 8 KiB tiles", lambda: copy_kernel(12288, 8192, 131072), 48, 233.5, "GM -> UB copy"),
    ("copy 12288^2 fp16, 128 B tiles", lambda: copy_kernel(12288, 128, 65536), 48, 564.8, "GM -> UB copy"),
    ("GEMM 1536^3 fp16 -> fp32, 24 cube cores", lambda: gemm_kernel(1536, 1536, 1536), 24, 38.8, "GEMM A3"),
    ("GEMM 3072^3 fp16 -> fp32, 24 cube cores", lambda: gemm_kernel(3072, 3072, 3072), 24, 206.7, "GEMM A3"),
    ("GEMM 6144^3 fp16 -> fp32, 24 cube cores", lambda: gemm_kernel(6144, 6144, 6144), 24, 1506.0, "GEMM A3"),
    ("flash attention 128x8192x128, 1 group", lambda: flash_attention_kernel(128, 8192, 128), 1, 74.5,
     "flash attention, one head, one core"),
)
NOT_MODELLED: tuple = ()


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


def workload_table(machine: str) -> list[tuple[str, float, float, str]]:
    """(name, predicted us, published us, source) per whole workload."""
    m = load_machine(machine)
    rows = []
    for name, kernel, blocks, published, source in WORKLOADS:
        res = pyptoemu.run(kernel(), machine=machine, blocks=blocks, data=False, races="off")
        rows.append((name, m.cycles_to_us(res.hardware_cycles), published, source))
    return rows


def print_workload_table(rows: list) -> int:
    print(f"{'workload':<40} {'predicted us':>12} {'published us':>12} {'ratio':>6}")
    misses = 0
    for name, predicted, published, _ in rows:
        ratio = predicted / published
        flag = "" if abs(ratio - 1) <= WORKLOAD_TOLERANCE else "  <-- outside +-25%"
        misses += bool(flag)
        print(f"{name:<40} {predicted:>12.1f} {published:>12.1f} {ratio:>6.2f}{flag}")
    copies = [r for r in rows if r[0].startswith("copy")]
    if len(copies) == 3:
        base_p, base_m = copies[0][1], copies[0][2]
        steps = [(p / base_p, m / base_m) for _, p, m, _ in copies]
        text = " : ".join(f"{p:.2f}" for p, _ in steps)
        ok = all(abs(p / m - 1) <= WORKLOAD_TOLERANCE for p, m in steps)
        print(f"copy tile-size trend (128 KiB : 8 KiB : 128 B): predicted {text}, published "
              f"{' : '.join(f'{m:.2f}' for _, m in steps)} ({'each step within +-25%' if ok else 'a step misses'})")
    for name, published in NOT_MODELLED:
        print(f"{name:<40} {'not modelled':>12} {published:>12}")
    return misses


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--machine", default="a2a3")
    ap.add_argument("--no-workloads", action="store_true")
    ns = ap.parse_args()
    print(f"machine {ns.machine}: per-instruction calibration (one idle core)")
    print_instruction_table(instruction_table(ns.machine))
    if not ns.no_workloads:
        print(f"\nmachine {ns.machine}: published whole-chip workloads")
        print_workload_table(workload_table(ns.machine))


if __name__ == "__main__":
    main()
