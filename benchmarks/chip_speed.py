"""Chip speed and memory: simulated instructions per wall-second with 48 blocks against one block
doing the same per-block work (issue 7 target: >= 80% of the one-block rate), and peak memory
of the same total work run as 1 block or as 48 blocks (memory should follow the work, not the core
count). Kernel: examples/vadd_spmd.pto (real data), ``--tiles`` 16-row tiles per block.

    python benchmarks/chip_speed.py [--runs 3] [--tiles 16]
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time
import tracemalloc
from pathlib import Path

import numpy as np

import pyptoemu

ROOT = Path(__file__).resolve().parents[1]
KERNEL = ROOT / "examples" / "vadd_spmd.pto"


def _inputs(rows: int) -> dict:
    rng = np.random.default_rng(0)
    return {"arg0": rng.standard_normal((rows, 64), dtype=np.float32),
            "arg1": rng.standard_normal((rows, 64), dtype=np.float32)}


def run_once(blocks: int, tiles_per_block: int) -> tuple[float, int, int]:
    rows = 16 * tiles_per_block * blocks
    inputs = _inputs(rows)
    t0 = time.process_time()  # CPU time: the machine may be shared with other work
    r = pyptoemu.run(KERNEL, inputs=inputs, args={"arg3": rows}, blocks=blocks)
    wall = time.process_time() - t0
    instrs = r.chip.recorder.seq  # every instruction recorded on every core
    assert np.array_equal(r.outputs["arg2"].reshape(rows, 64), inputs["arg0"] + inputs["arg1"])
    return wall, instrs, r.cycles


def rate(blocks: int, tiles: int, runs: int) -> dict:
    walls, instrs, cycles = [], 0, 0
    for _ in range(runs):
        wall, instrs, cycles = run_once(blocks, tiles)
        walls.append(wall)
    wall = statistics.median(walls)
    return {"blocks": blocks, "tiles": tiles, "instructions": instrs, "median_wall_s": wall,
            "instr_per_s": instrs / wall, "makespan_cycles": cycles}


def peak_mib(blocks: int, tiles_per_block: int) -> float:
    tracemalloc.start()
    run_once(blocks, tiles_per_block)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 2**20


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--tiles", type=int, default=16, help="16-row tiles per block")
    ns = ap.parse_args()
    print(f"machine: {platform.machine()} {platform.processor() or ''} python {platform.python_version()}")
    run_once(1, 1)  # warm-up: imports, specs, parser
    one = rate(1, ns.tiles, ns.runs)
    many = rate(48, ns.tiles, ns.runs)
    whole = rate(1, 48 * ns.tiles, ns.runs)  # the stricter baseline: one block doing all 48 blocks' work
    for m in (one, whole, many):
        print(f"blocks {m['blocks']:>3} x {m['tiles']:>4} tiles: {m['instructions']:>7} instructions in "
              f"{m['median_wall_s']:.3f} CPU s = {m['instr_per_s']:,.0f} instr/s (makespan {m['makespan_cycles']} cycles)")
    ratio = many["instr_per_s"] / one["instr_per_s"]
    strict = many["instr_per_s"] / whole["instr_per_s"]
    print(f"48-block rate / 1-block rate, same per-block work = {ratio:.2f}  (target >= 0.80: "
          f"{'met' if ratio >= 0.8 else 'NOT met'})")
    print(f"48-block rate / rate of 1 block doing the same total work = {strict:.2f}")
    same_work_one = peak_mib(1, 48 * ns.tiles)
    same_work_many = peak_mib(48, ns.tiles)
    print(f"peak memory, same total work ({48 * ns.tiles} tiles): 1 block {same_work_one:.1f} MiB, "
          f"48 blocks on 48 cores {same_work_many:.1f} MiB (ratio {same_work_many / same_work_one:.2f})")
    print(f"peak memory, 1 block of {ns.tiles} tiles: {peak_mib(1, ns.tiles):.1f} MiB; "
          f"48 blocks of {ns.tiles} tiles: {same_work_many:.1f} MiB")


if __name__ == "__main__":
    main()
