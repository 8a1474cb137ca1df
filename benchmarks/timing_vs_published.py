"""Predicted vs published time for single-core workloads from machine-a2a3.md.

    python benchmarks/timing_vs_published.py

Workloads (one AI core, as published):
- add, 8192 x 8192 fp16, double-buffered: published 6909.6 us on one 910B1 core.
- flash attention is not modelled here (needs the cube<->vector split machine).

The kernel is generated (the same ping-pong structure as examples/double_buffer_1024.pto, with two
inputs): 64 x 128 fp16 tiles, EVENT_ID0/1 per buffer. No calibration is applied: the point is to see
how far the machine file's bandwidths and latencies put us from hardware.
"""

from __future__ import annotations

import time

import numpy as np

import pyptoemu

ROWS, COLS, TR, TC = 8192, 8192, 64, 128


def tile(dt: str) -> str:
    return (f"!pto.tile_buf<loc=vec, dtype={dt}, rows={TR}, cols={TC}, v_row={TR}, v_col={TC}, "
            f"blayout=row_major, slayout=none_box, fractal=512, pad=0>")


def add_kernel(rows: int) -> str:
    t = tile("f16")
    pv = f"!pto.partition_tensor_view<{TR}x{TC}xf16>"
    tb = TR * TC * 2
    lines = ["func.func @add(%arg0: !pto.ptr<f16>, %arg1: !pto.ptr<f16>, %arg2: !pto.ptr<f16>) {",
             "  %c0 = arith.constant 0 : index", "  %c1 = arith.constant 1 : index",
             f"  %cR = arith.constant {rows} : index", f"  %cC = arith.constant {COLS} : index",
             f"  %cTR = arith.constant {TR} : index", f"  %cTC = arith.constant {TC} : index",
             f"  %cTC2 = arith.constant {2 * TC} : index"]
    for i in range(3):
        lines.append(f"  %v{i} = pto.make_tensor_view %arg{i}, shape = [%cR, %cC], strides = [%cC, %c1] "
                     f": !pto.tensor_view<?x?xf16>")
    for b in range(2):
        for k, name in enumerate(("x", "y", "z")):
            lines.append(f"  %c{name}{b} = arith.constant {(3 * b + k) * tb} : i64")
            lines.append(f"  %{name}{b} = pto.alloc_tile addr = %c{name}{b} : {t}")
    for b in range(2):
        lines.append(f"  pto.set_flag[<PIPE_MTE3>, <PIPE_MTE2>, <EVENT_ID{b}>]")
    lines.append("  scf.for %r = %c0 to %cR step %cTR {")
    lines.append("    scf.for %c = %c0 to %cC step %cTC2 {")
    lines.append("      %cb = arith.addi %c, %cTC : index")
    for b, col in ((0, "%c"), (1, "%cb")):
        e = f"<EVENT_ID{b}>"
        views = [f"      %p{n}{b} = pto.partition_view %v{k}, offsets = [%r, {col}], sizes = [%cTR, %cTC] "
                 f": !pto.tensor_view<?x?xf16> -> {pv}" for k, n in enumerate("xyz")]
        lines += views + [
            f"      pto.wait_flag[<PIPE_MTE3>, <PIPE_MTE2>, {e}]",
            f"      pto.tload ins(%px{b} : {pv}) outs(%x{b} : {t})",
            f"      pto.tload ins(%py{b} : {pv}) outs(%y{b} : {t})",
            f"      pto.set_flag[<PIPE_MTE2>, <PIPE_V>, {e}]",
            f"      pto.wait_flag[<PIPE_MTE2>, <PIPE_V>, {e}]",
            f"      pto.tadd ins(%x{b}, %y{b} : {t}, {t}) outs(%z{b} : {t})",
            f"      pto.set_flag[<PIPE_V>, <PIPE_MTE3>, {e}]",
            f"      pto.wait_flag[<PIPE_V>, <PIPE_MTE3>, {e}]",
            f"      pto.tstore ins(%z{b} : {t}) outs(%pz{b} : {pv})",
            f"      pto.set_flag[<PIPE_MTE3>, <PIPE_MTE2>, {e}]",
        ]
    lines += ["    }", "  }"]
    for b in range(2):
        lines.append(f"  pto.wait_flag[<PIPE_MTE3>, <PIPE_MTE2>, <EVENT_ID{b}>]")
    lines += ["  return", "}"]
    return "\n".join(lines) + "\n"


def main() -> None:
    rows = ROWS
    rng = np.random.default_rng(0)
    x = rng.standard_normal((rows, COLS)).astype(np.float16)
    y = rng.standard_normal((rows, COLS)).astype(np.float16)
    t0 = time.perf_counter()
    res = pyptoemu.run(add_kernel(rows), inputs={"arg0": x, "arg1": y}, races="off")
    wall = time.perf_counter() - t0
    assert np.array_equal(res.outputs["arg2"], x + y)
    published = 6909.6
    print(f"add 8192x8192 fp16, 1 core: predicted {res.time_us:.1f} us ({res.cycles} cycles, bound by "
          f"{res.bound_pipe}); published {published} us; ratio predicted/published "
          f"{res.time_us / published:.2f}; simulated in {wall:.1f} s")
    for p, st in res.pipes.items():
        print(f"  {p:<5} busy {st.busy_cycles:>10} cycles  {st.instructions:>7} instructions")


if __name__ == "__main__":
    main()
