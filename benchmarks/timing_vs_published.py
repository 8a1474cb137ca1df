"""Predicted vs published time of the one single-core published workload, with real data.

    python benchmarks/timing_vs_published.py

add, 8192 x 8192 fp16, one vector core (published 6909.6 us on a 910B1): the kernel of
benchmarks/kernels/streams.py (one 16 KiB row per tile, double-buffered), run with data so the
sum is checked too. Its GM (384 MiB) does not fit in L2, so it streams from HBM through the core's
port (pyptoemu.core.memsys). The whole-chip workloads: benchmarks/timing_fidelity.py.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from kernels.streams import add_kernel

import pyptoemu
from ptoisa.machine import load_machine

PUBLISHED_US = 6909.6


def main() -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8192, 8192)).astype(np.float16)
    y = rng.standard_normal((8192, 8192)).astype(np.float16)
    m = load_machine()
    t0 = time.perf_counter()
    res = pyptoemu.run(add_kernel(tr=1, tc=8192), inputs={"arg0": x, "arg1": y}, races="off", blocks=1)
    wall = time.perf_counter() - t0
    assert np.array_equal(res.outputs["arg2"].reshape(8192, 8192), x + y)
    cycles = res.hardware_cycles  # the makespan, the kernel launch and the block's dispatch
    us = m.cycles_to_us(cycles)
    print(f"add 8192x8192 fp16, 1 core: predicted {us:.1f} us ({cycles} cycles with launch; {res.bound}); "
          f"published {PUBLISHED_US} us; ratio predicted/published {us / PUBLISHED_US:.2f}; simulated in "
          f"{wall:.1f} s")
    for p, st in res.pipes.items():
        print(f"  {p:<5} busy {st.busy_cycles:>10} cycles  {st.instructions:>7} instructions")


if __name__ == "__main__":
    main()
