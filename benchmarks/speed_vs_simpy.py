"""Emulator speed as a ratio to bare SimPy, measured in the same process on the same machine.

    python benchmarks/speed_vs_simpy.py [--repeat 5] [--kernel examples/double_buffer_1024.pto]

Why a ratio: wall-clock rates depend on the machine and on whatever else runs on it; the ratio of
the emulator's instruction rate to SimPy's own event rate (one process per pipe, each yielding
``timeout(1)`` forever: the cheapest thing a SimPy model can do per event) does not, to first order.
Both are measured in CPU time of this process (what other processes on a shared machine take does
not count), back to back, ``--repeat`` times (each emulator run right after its own SimPy
measurement, so a load that comes and goes on a shared machine hits both sides alike), and the
median ratio is reported.

The default kernel is the 64x64 f32 stream (examples/double_buffer_1024.pto: 256 tiles loaded,
scaled, shifted and stored through two UB buffers). Targets (issue 8): with data >= 0.10, timing
only (data=False) >= 0.30.
"""

from __future__ import annotations

import argparse
import platform
import statistics
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
    t0 = time.process_time()
    env.run(until=events // PIPES)
    return events / (time.process_time() - t0)


def emulator_rate(kernel: Path, data: bool, inputs: dict | None) -> tuple[float, int]:
    """Instructions (every instruction a pipe or the scalar unit executed) per second."""
    t0 = time.process_time()
    res = pyptoemu.run(kernel, inputs=inputs if data else None, races="off", data=data)
    wall = time.process_time() - t0
    return res.instructions / wall, res.instructions


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
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
    modes = (("with data", True, 0.10), ("timing only", False, 0.30))
    simpy_rates: list[float] = []
    rates: dict[str, list[float]] = {label: [] for label, _, _ in modes}
    ratios: dict[str, list[float]] = {label: [] for label, _, _ in modes}
    counts: dict[str, int] = {}
    for _ in range(ns.repeat):  # interleaved: a load that comes and goes hits both sides alike
        base = simpy_event_rate()
        simpy_rates.append(base)
        for label, data, _ in modes:
            rate, counts[label] = emulator_rate(kernel, data, inputs)
            rates[label].append(rate)
            ratios[label].append(rate / base)
    print(f"bare SimPy ({PIPES} processes yielding timeout(1)): {statistics.median(simpy_rates):,.0f} events/s "
          f"(median of {ns.repeat})")
    for label, _, target in modes:
        ratio = statistics.median(ratios[label])
        verdict = "met" if ratio >= target else "NOT met"
        print(f"{label:<12} {kernel.name}: {counts[label]} instructions, {statistics.median(rates[label]):,.0f} "
              f"instructions/s, ratio to SimPy {ratio:.3f} (median of {ns.repeat} runs each beside its own "
              f"SimPy measurement; target >= {target}: {verdict})")

if __name__ == "__main__":
    main()
