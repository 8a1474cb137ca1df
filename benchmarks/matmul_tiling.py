"""Tensor-level matmul as tiled by ``pypto.lib.matmul``: for each shape, the tiling chosen from the
machine's buffers, whether its K loop is double-buffered (ping-pong, rule 8 of the module), the
simulated cycles on one cube core of the a2a3 model (timing only, no data), the cube (M pipe) and
MTE2 busy shares of them and the bounding pipe. ``cube busy`` near 100% would mean the loads and
moves hide behind the cube; these shapes are MTE2-bound (the cube needs fewer cycles per K chunk
than the chunk's loads), so ping-pong buffering brings the run close to the MTE2 busy time, and
cube busy up to the M/MTE2 work ratio.

    python benchmarks/matmul_tiling.py
"""

from __future__ import annotations

import math

import numpy as np

import pyptoemu
from pypto import DataType, ir
from pypto.ir import IRBuilder
from pypto.ir.compiler import compile_program
from pypto.ir.op import tensor
from pypto.lib.matmul import plan_matmul

SHAPES = [
    ((256, 512), (512, 384), DataType.FP16),
    ((100, 130), (130, 70), DataType.FP16),
    ((1, 4096), (4096, 1), DataType.FP16),
    ((3, 64, 300), (3, 300, 50), DataType.BF16),
    ((97, 61), (61, 131), DataType.FP32),
    ((1024, 1024), (1024, 1024), DataType.FP16),
    ((64, 4096), (4096, 64), DataType.FP16),      # one N block: a rolled K loop of ping-pong groups
    ((128, 2048), (2048, 256), DataType.FP16),
]


def program(sa: tuple, sb: tuple, dtype: DataType) -> ir.Program:
    ib = IRBuilder()
    with ib.program("Matmul") as p, ib.function("mm", type=ir.FunctionType.InCore) as f:
        a = f.param("a", ir.TensorType(list(sa), dtype))
        b = f.param("b", ir.TensorType(list(sb), dtype))
        c = tensor.matmul(a, b, out_dtype=DataType.FP32)
        f.return_type(c.type)
        ib.return_stmt(ib.let("c", c))
    return p.get_result()


def main() -> None:
    print(f"{'shape':34s} {'bm x bn x bk':>14s} {'panel':>5s} {'K loop':>9s} {'cycles':>9s} {'cube busy':>9s} "
          f"{'MTE2 busy':>9s} {'bound':>6s}")
    for sa, sb, dtype in SHAPES:
        batch = math.prod(np.broadcast_shapes(sa[:-2], sb[:-2]))
        t = plan_matmul(sa[-2], sb[-1], sa[-1], dtype, DataType.FP32, batch)
        pto = compile_program(program(sa, sb, dtype), with_cpp=False).pto["mm"]
        r = pyptoemu.run(pto, entry="mm", data=False)
        shape = f"{list(sa)} @ {list(sb)} {dtype.name}"
        tiles = f"{t.bm}x{t.bn}x{t.bk}"
        cube, mte2 = r.pipes["M"].busy_cycles / r.cycles, r.pipes["MTE2"].busy_cycles / r.cycles
        kloop = "ping-pong" if t.depth == 2 else "single"
        print(f"{shape:34s} {tiles:>14s} {t.a_panel!s:>5s} {kloop:>9s} {r.cycles:9d} {cube:9.0%} {mte2:9.0%} "
              f"{r.bound_pipe:>6s}")


if __name__ == "__main__":
    main()
