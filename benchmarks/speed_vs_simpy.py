"""Emulator speed as a ratio to bare SimPy, measured in the same process on the same machine.

    python benchmarks/speed_vs_simpy.py [--repeat 3] [--kernel examples/double_buffer_1024.pto]

Why a ratio: wall-clock rates depend on the machine and on whatever else runs on it; the ratio of
the emulator's instruction rate to SimPy's own event rate (one process per pipe, each yielding
``timeout(1)`` forever: the cheapest thing a SimPy model can do per event) does not, to first order.
Both are measured back to back, best of ``--repeat``.

The default kernel is the 64x64 f32 stream (examples/double_buffer_1024.pto: 256 tiles loaded,
scaled, shifted and stored through two UB buffers). Targets (issue 8): with data >= 0.10, timing
only (data=False) >= 0.30.
"""

from __future__ import annotations

import argparse
import platform
import time
from pathlib import Path

import numpy as np
import simpy

import pyptoemu

ROOT = Path(__file__).resolve().parents[1]
PIPES = 6  # MTE1 MTE2 MTE3 V M FIX


def simpy_event_rate(events: int = 300_000) -> float:
    """Events per second of bare SimPy: one process per pipe yielding timeout(1)."""
    env = simpy.Environment()

    def pipe(env: simpy.Environment):
        while True:
            yield env.timeout(1)

    for _ in range(PIPES):
        env.process(pipe(env))
    t0 = time.perf_counter()
    env.run(until=events // PIPES)
    return events / (time.perf_counter() - t0)


def emulator_rate(kernel: Path, data: bool, inputs: dict | None) -> tuple[float, int]:
    """Instructions (every instruction a pipe or the scalar unit executed) per second."""
    t0 = time.perf_counter()
    res = pyptoemu.run(kernel, inputs=inputs if data else None, races="off", data=data)
    wall = time.perf_counter() - t0
    return res.instructions / wall, res.instructions


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--kernel", default=str(ROOT / "examples" / "double_buffer_1024.pto"))
    ns = ap.parse_args()
    kernel = Path(ns.kernel).resolve()
    rng = np.random.default_rng(0)
    inputs = None
    if kernel.name == "double_buffer_1024.pto":
        inputs = {"arg0": rng.standard_normal((1024, 1024), dtype=np.float32)}
    pyptoemu.run(kernel, inputs=inputs, races="off")  # warm-up: imports, specs, parser
    print(f"machine: {platform.machine()} {platform.processor() or ''} python {platform.python_version()} "
          f"simpy {simpy.__version__}")
    simpy_rate = max(simpy_event_rate() for _ in range(ns.repeat))
    print(f"bare SimPy ({PIPES} processes yielding timeout(1)): {simpy_rate:,.0f} events/s")
    for label, data, target in (("with data", True, 0.10), ("timing only", False, 0.30)):
        best, n = 0.0, 0
        for _ in range(ns.repeat):
            rate, n = emulator_rate(kernel, data, inputs)
            best = max(best, rate)
        ratio = best / simpy_rate
        verdict = "met" if ratio >= target else "NOT met"
        print(f"{label:<12} {kernel.name}: {n} instructions, {best:,.0f} instructions/s, "
              f"ratio to SimPy {ratio:.3f} (target >= {target}: {verdict})")


if __name__ == "__main__":
    main()
