"""Emulator speed: simulated instructions per wall-second and peak memory on the 1024x1024
double-buffered kernel (64x64 f32 tiles, real data). Median of N runs.

    python benchmarks/emulator_speed.py [--runs 5] [--kernel examples/double_buffer_1024.pto]
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time
import tracemalloc
from pathlib import Path

import pyptoemu

ROOT = Path(__file__).resolve().parents[1]


def measure(kernel: Path, runs: int) -> dict:
    rates, walls, peaks, cpus = [], [], [], []
    instrs = tile_instrs = cycles = 0
    pyptoemu.run(kernel)  # warm-up: imports, YAML specs, parser
    for _ in range(runs):  # speed, without the memory tracer (it slows Python down)
        t0, c0 = time.perf_counter(), time.process_time()
        res = pyptoemu.run(kernel)
        wall = time.perf_counter() - t0
        cpus.append(time.process_time() - c0)
        # every instruction a pipe executed: tile ops plus set_flag / wait_flag / barrier
        instrs = len(res.core.trace_log)
        tile_instrs = sum(p.instructions for name, p in res.pipes.items() if name != "S")
        cycles = res.cycles
        walls.append(wall)
        rates.append(instrs / wall)
    for _ in range(runs):  # peak memory of a whole run, separately
        tracemalloc.start()
        pyptoemu.run(kernel)
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    return {
        "kernel": str(kernel.relative_to(ROOT)), "runs": runs, "instructions": instrs, "tile_instructions": tile_instrs,
        "simulated_cycles": cycles, "median_wall_s": statistics.median(walls),
        "median_instr_per_s": statistics.median(rates),
        "median_cpu_s": statistics.median(cpus),
        "instr_per_cpu_s": instrs / statistics.median(cpus),
        "median_tile_instr_per_s": tile_instrs / statistics.median(walls), "median_peak_mib": statistics.median(peaks) / 2**20,
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--kernel", default=str(ROOT / "examples" / "double_buffer_1024.pto"))
    ns = ap.parse_args()
    m = measure(Path(ns.kernel).resolve(), ns.runs)
    print(f"machine: {platform.machine()} {platform.processor() or ''} python {platform.python_version()}")
    for k, v in m.items():
        print(f"{k:>22}: {v:.4g}" if isinstance(v, float) else f"{k:>22}: {v}")
    print("target: >= 50000 instructions/s -> " + ("met" if m["median_instr_per_s"] >= 50000 else "NOT met"))


if __name__ == "__main__":
    main()
