"""One-kernel programs around a library op, built with the IR builder (so hypothesis can vary shapes).

``program(build, params)`` makes an InCore kernel ``kern`` whose body is ``r = build(*params)`` and
an Orchestration ``main`` that calls it: the kernel's outputs and workspaces are then allocated by
the caller, as for any program.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from pypto import DataType, ir
from pypto.ir import IRBuilder
from pypto.ir import expr as E
from pypto.ir.types import ScalarType

NP = {DataType.FP32: np.float32, DataType.FP16: np.float16, DataType.BF16: ml_dtypes.bfloat16}
# relative tolerances by dtype (common rules): fp32 ~1e-5, fp16 ~1e-3, bf16 ~1.6e-2
RTOL = {DataType.FP32: 1e-5, DataType.FP16: 2e-3, DataType.BF16: 1.6e-2}


def program(build, params: list[tuple[str, tuple, DataType]]) -> ir.Program:
    """A shape entry that is a string is a dynamic dim of that name (``pl.dynamic``), shared by every
    parameter that names it; ``build`` may take the builder first (``build(ib, *params)``, to bind
    intermediate calls with ``ib.let``) when it is marked ``with_builder``."""
    ib = IRBuilder()
    dyn: dict = {}

    def ttype(s: tuple, d: DataType) -> ir.TensorType:
        return ir.TensorType([dyn.setdefault(x, E.Var(x, ScalarType(DataType.INDEX))) if isinstance(x, str) else x
                              for x in s], d)

    with ib.program("Lib") as p:
        gk = p.declare_function("kern")
        with ib.function("kern", type=ir.FunctionType.InCore) as f:
            xs = [f.param(n, ttype(s, d)) for n, s, d in params]
            call = build(ib, *xs) if getattr(build, "with_builder", False) else build(*xs)
            f.return_type(call.type)
            ib.return_stmt(ib.let("r", call))
        rtype = call.type
        with ib.function("main", type=ir.FunctionType.Orchestration) as g:
            ys = [g.param(n, ttype(s, d)) for n, s, d in params]
            g.return_type(rtype)
            ib.return_stmt(ib.let("y", ir.Call(gk, tuple(ys), {}, rtype)))
    return p.get_result()


def data(shape: tuple, dtype: DataType, seed: int, low: float = -2.0, high: float = 2.0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.uniform(low, high, shape).astype(NP[dtype])


def close(got: np.ndarray, want: np.ndarray, dtype: DataType, atol: float | None = None) -> None:
    rtol = RTOL[dtype]
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol,
                               atol=atol if atol is not None else rtol)
