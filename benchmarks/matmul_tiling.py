"""Tensor-level matmul as tiled by ``pypto.lib.matmul``: for each shape, the tiling chosen from the
machine's buffers, the simulated cycles on one cube core (timing only, no data), the cube (M pipe)
share of them and the bounding pipe. ``cube share`` near 1.0 would mean the loads and moves hide
behind the cube; the tiled loop nest is single-buffered, so the MTE2 loads mostly do not.

    python benchmarks/matmul_tiling.py
"""

from __future__ import annotations

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
    print(f"{'shape':34s} {'bm x bn x bk':>14s} {'panel':>5s} {'cycles':>9s} {'cube share':>10s} {'bound':>6s}")
    for sa, sb, dtype in SHAPES:
        t = plan_matmul(sa[-2], sb[-1], sa[-1], dtype, DataType.FP32)
        pto = compile_program(program(sa, sb, dtype), with_cpp=False).pto["mm"]
        r = pyptoemu.run(pto, entry="mm", data=False)
        shape = f"{list(sa)} @ {list(sb)} {dtype.name}"
        tiles = f"{t.bm}x{t.bn}x{t.bk}"
        share = r.pipes["M"].busy_cycles / r.cycles
        print(f"{shape:34s} {tiles:>14s} {t.a_panel!s:>5s} {r.cycles:9d} {share:10.2f} {r.bound_pipe:>6s}")


if __name__ == "__main__":
    main()
