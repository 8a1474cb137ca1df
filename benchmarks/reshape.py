"""Reshape cost in pypto.lib (issue 12): simulated cycles of ``pl.reshape`` kernels over shapes whose
rows differ, on the a2a3 model, each output checked against NumPy.

    python benchmarks/reshape.py

A reshape of a kernel's read-only argument copies from a second GM view of its bytes with the
result's shape (``tensor.as_shape``); before, a reshape whose rows did not divide each other moved
runs of ``gcd`` of the two last dims: (2, 2, 9000) -> (9000, 4) was 9000 runs of 4 elements, 4874895
cycles.
"""

from __future__ import annotations

import time

import numpy as np

from pypto import DataType, ir
from pypto.ir import IRBuilder
from pypto.ops import tensor as T
from pypto.runtime import run

CASES = [((2, 2, 9000), (9000, 4)), ((9000, 4), (2, 2, 9000)), ((37, 130), (130, 37)), ((100, 30), (60, 50)),
         ((6, 10), (4, 15)), ((2, 3, 64), (3, 128)), ((4, 3, 16), (2, 96)), ((2, 3, 64), (6, 2, 32)),
         ((3000,), (30, 100))]


def reshape_program(src: tuple, dst: tuple) -> ir.Program:
    ib = IRBuilder()
    with ib.program("Reshape") as p:
        gk = p.declare_function("kern")
        with ib.function("kern", type=ir.FunctionType.InCore) as f:
            x = f.param("x", ir.TensorType(list(src), DataType.FP32))
            call = T.reshape(x, list(dst))
            f.return_type(call.type)
            ib.return_stmt(ib.let("r", call))
        with ib.function("main", type=ir.FunctionType.Orchestration) as g:
            y = g.param("x", ir.TensorType(list(src), DataType.FP32))
            g.return_type(call.type)
            ib.return_stmt(ib.let("y", ir.Call(gk, (y,), {}, call.type)))
    return p.get_result()


def main() -> int:
    t0 = time.perf_counter()
    print("fp32 reshapes, machine a2a3; outputs checked against NumPy")
    print(f"{'source':>14} {'result':>14} {'cycles':>10}")
    for src, dst in CASES:
        x = np.random.default_rng(0).standard_normal(src).astype(np.float32)
        r = run(reshape_program(src, dst), x)
        np.testing.assert_array_equal(r.outputs[0], x.reshape(dst))
        print(f"{src!s:>14} {dst!s:>14} {r.cycles:>10}")
    print(f"({time.perf_counter() - t0:.1f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
