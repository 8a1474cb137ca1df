"""Memory against run length (issue 8 item 8): peak RSS of timing-only runs of 1M, 3M and 10M
instructions of one kernel, each size in its own process, so each figure is that run's own peak.

Kernel: a double-buffered load -> scale -> store stream (64x64 f32 tiles, ping/pong in UB, flags
between MTE2, V and MTE3) in a long ``scf.for`` loop over ``--chunk`` tile pairs at a time (the
columns of one chunk, round and round). No instruction syncs the scalar unit with the pipes (no full
barrier, no wait on PIPE_S): what keeps the run's memory bounded is the depth of the pipes' issue
queues (machine param ``issue_queue_depth``), at which the scalar unit stalls as on hardware. With
``--machine a2a3:unbounded_issue_queues`` (the model before the bound) the scalar unit issues the
whole loop before the pipes run it and memory grows by ~650 B per instruction.
Races are checked (the default) and the critical path is computed, as in any run without --trace.

``--chip``: the multi-core case (issue 7): examples/vadd_spmd.pto over ``--blocks`` blocks (48: one
per vector core), each block a long loop over its own rows (16-row tiles), timing only. The cores
never hand anything to each other, so every GM access stays racy for the other cores to the end:
the race detector keeps them folded into runs (pyptoemu.check.accessruns), and its live set (the
"race live set" column) stays flat. Each core's scalar unit stalls on its full issue queues as
in the one-core stream (with ``--machine a2a3:unbounded_issue_queues`` it would issue its whole
loop at once, and peak RSS would follow the per-block loop length).

    python benchmarks/memory_growth.py [--sizes 1e6,3e6,1e7] [--chunk 8] [--machine a2a3]
    python benchmarks/memory_growth.py --chip [--sizes 1e5,3e5,1e6] [--blocks 48]

Prints, per size: instructions recorded (and, of them, the scalar units' stalls on a full issue
queue, each recorded as a wait on S), simulated cycles, wall seconds, instructions per second and
peak RSS (MiB); then whether the peak stays flat and under 1 GiB.
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

TILE = "!pto.tile_buf<loc=vec, dtype=f32, rows=64, cols=64, v_row=64, v_col=64, blayout=row_major, " \
       "slayout=none_box, fractal=512, pad=0>"
VIEW = "!pto.partition_tensor_view<64x64xf32>"
PER_PAIR = 22  # instructions per tile pair (ping and pong: wait, load, set, wait, mul, barrier, add, set, wait, store, set)


def _half(buf: str, ev: int, pin: str, pout: str) -> str:
    return f"""
        pto.wait_flag[<PIPE_MTE3>, <PIPE_MTE2>, <EVENT_ID{ev}>]
        pto.tload ins({pin} : {VIEW}) outs({buf} : {TILE})
        pto.set_flag[<PIPE_MTE2>, <PIPE_V>, <EVENT_ID{ev}>]
        pto.wait_flag[<PIPE_MTE2>, <PIPE_V>, <EVENT_ID{ev}>]
        pto.tmuls ins({buf}, %cst_2 : {TILE}, f32) outs({buf} : {TILE})
        pto.barrier <PIPE_V>
        pto.tadds ins({buf}, %cst_1 : {TILE}, f32) outs({buf} : {TILE})
        pto.set_flag[<PIPE_V>, <PIPE_MTE3>, <EVENT_ID{ev}>]
        pto.wait_flag[<PIPE_V>, <PIPE_MTE3>, <EVENT_ID{ev}>]
        pto.tstore ins({buf} : {TILE}) outs({pout} : {VIEW})
        pto.set_flag[<PIPE_MTE3>, <PIPE_MTE2>, <EVENT_ID{ev}>]"""


def kernel(chunks: int, chunk: int) -> str:
    """``chunks`` times: ``chunk`` tile pairs of a 64 x (128 * chunk) f32 matrix (no scalar sync point)."""
    cols = 128 * chunk
    return f"""module attributes {{pto.target_arch = "a3"}} {{
  func.func @stream(%arg0: !pto.ptr<f32>, %arg1: !pto.ptr<f32>) attributes {{pto.entry}} {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %ccols = arith.constant {cols} : index
    %cchunks = arith.constant {chunks} : index
    %c0_i64 = arith.constant 0 : i64
    %c16384_i64 = arith.constant 16384 : i64
    %cst_2 = arith.constant 2.000000e+00 : f32
    %cst_1 = arith.constant 1.000000e+00 : f32
    %vin = pto.make_tensor_view %arg0, shape = [%c64, %ccols], strides = [%ccols, %c1] : !pto.tensor_view<?x?xf32>
    %vout = pto.make_tensor_view %arg1, shape = [%c64, %ccols], strides = [%ccols, %c1] : !pto.tensor_view<?x?xf32>
    %ping = pto.alloc_tile addr = %c0_i64 : {TILE}
    %pong = pto.alloc_tile addr = %c16384_i64 : {TILE}
    scf.for %it = %c0 to %cchunks step %c1 {{
      pto.set_flag[<PIPE_MTE3>, <PIPE_MTE2>, <EVENT_ID0>]
      pto.set_flag[<PIPE_MTE3>, <PIPE_MTE2>, <EVENT_ID1>]
      scf.for %col = %c0 to %ccols step %c128 {{
        %col1 = arith.addi %col, %c64 : index
        %pin0 = pto.partition_view %vin, offsets = [%c0, %col], sizes = [%c64, %c64] : !pto.tensor_view<?x?xf32> -> {VIEW}
        %pout0 = pto.partition_view %vout, offsets = [%c0, %col], sizes = [%c64, %c64] : !pto.tensor_view<?x?xf32> -> {VIEW}
        %pin1 = pto.partition_view %vin, offsets = [%c0, %col1], sizes = [%c64, %c64] : !pto.tensor_view<?x?xf32> -> {VIEW}
        %pout1 = pto.partition_view %vout, offsets = [%c0, %col1], sizes = [%c64, %c64] : !pto.tensor_view<?x?xf32> -> {VIEW}
{_half("%ping", 0, "%pin0", "%pout0")}
{_half("%pong", 1, "%pin1", "%pout1")}
      }}
      pto.wait_flag[<PIPE_MTE3>, <PIPE_MTE2>, <EVENT_ID0>]
      pto.wait_flag[<PIPE_MTE3>, <PIPE_MTE2>, <EVENT_ID1>]
    }}
    return
  }}
}}
"""


def per_chunk(chunk: int) -> int:
    return PER_PAIR * chunk + 4  # two pre-sets, two final waits


SPMD = Path(__file__).resolve().parents[1] / "examples" / "vadd_spmd.pto"
SPMD_PER_TILE = 12  # instructions per 16-row tile of vadd_spmd on one vector core (sync inserted)


def child(n: int, chunk: int, blocks: int = 0, machine: str = "a2a3") -> dict:
    """One run of about ``n`` instructions in this process: its figures and this process's peak RSS.
    ``blocks``: the chip kernel over that many blocks (0: the one-core stream)."""
    import pyptoemu  # imported here: the parent process stays small

    t0 = time.perf_counter()
    if blocks:
        tiles = max(1, round(n / (blocks * SPMD_PER_TILE)))
        res = pyptoemu.run(SPMD, args={"arg3": 16 * tiles * blocks}, blocks=blocks, data=False,
                           max_steps=10**9, machine=machine)
    else:
        chunks = max(1, round(n / per_chunk(chunk)))
        res = pyptoemu.run(kernel(chunks, chunk), data=False, max_steps=10**9, machine=machine)
    wall = time.perf_counter() - t0
    recorded = res.chip.recorder.seq
    # the scalar units' stalls on a full issue queue are recorded too (waits on S named "issue")
    stalls = sum(c.scalar.stalls for c in res.chip.cores)
    live = max((getattr(c, "peak_live", 0) for c in res.chip.recorder.consumers), default=0)
    assert not res.findings, [str(f) for f in res.findings]
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # Linux: KiB
    return {"target": n, "instructions": recorded, "stalls": stalls, "cycles": res.cycles, "wall_s": wall,
            "instr_per_s": recorded / wall, "peak_rss_mib": peak_kib / 1024, "bound": res.bound,
            "race_live": live}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", help="instruction counts, comma-separated (default 1e6,3e6,1e7; "
                    "with --chip 1e5,3e5,1e6)")
    ap.add_argument("--chunk", type=int, default=8, help="tile pairs per outer iteration")
    ap.add_argument("--machine", default="a2a3", help="machine (a2a3:unbounded_issue_queues: no queue bound)")
    ap.add_argument("--chip", action="store_true", help="vadd_spmd over --blocks blocks on the chip")
    ap.add_argument("--blocks", type=int, default=48, help="blocks of the --chip kernel")
    ap.add_argument("--child", type=float, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    blocks = args.blocks if args.chip else 0
    if args.child is not None:
        print(json.dumps(child(int(args.child), args.chunk, blocks, args.machine)))
        return 0
    print(f"machine: {platform.machine()} {platform.processor() or ''} python {platform.python_version()}; "
          f"emulated: {args.machine}")
    print(f"kernel: vadd_spmd, {blocks} blocks" if blocks else f"kernel: one-core stream, chunk {args.chunk}")
    sizes = args.sizes or ("1e5,3e5,1e6" if blocks else "1e6,3e6,1e7")
    rows = []
    for n in (int(float(s)) for s in sizes.split(",")):
        out = subprocess.run([sys.executable, __file__, "--child", str(n), "--chunk", str(args.chunk),
                              "--machine", args.machine, *(["--chip", "--blocks", str(blocks)] if blocks else [])],
                             capture_output=True, text=True, check=True)
        row = json.loads(out.stdout.strip().splitlines()[-1])
        rows.append(row)
        print(f"{row['instructions']:>11,} instructions ({row['stalls']:,} issue stalls)  {row['cycles']:>13,} cycles  "
              f"{row['wall_s']:8.1f} s  "
              f"{row['instr_per_s']:9,.0f} instr/s  peak RSS {row['peak_rss_mib']:7.1f} MiB  "
              f"race live set <= {row['race_live']:,} entries", flush=True)
    peaks = [r["peak_rss_mib"] for r in rows]
    flat = max(peaks) - min(peaks) <= 0.1 * min(peaks) + 16
    print(f"verdict: peak RSS {min(peaks):.0f}-{max(peaks):.0f} MiB over {rows[0]['instructions']:,}-"
          f"{rows[-1]['instructions']:,} instructions: {'flat' if flat else 'GROWS'}, "
          f"{'under' if max(peaks) < 1024 else 'OVER'} 1 GiB")
    print(f"critical path: {rows[-1]['bound']}")
    return 0 if flat and max(peaks) < 1024 else 1


if __name__ == "__main__":
    raise SystemExit(main())
