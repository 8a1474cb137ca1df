"""Broadcasting binary ops lower to the expand ops and compute what NumPy broadcasting computes.

The tile-level program covers the forms with no single expand op (vector on the left of sub/div,
maximum with a row vector, [M, 1] - [1, N]); the tensor-level one the same through
ConvertTensorToBlockOps. Also: the tensor structural ops' deduction and their host evaluation.
"""

import numpy as np
import pytest
from conftest import needs_emulator, program_file

from pypto import DataType
from pypto.errors import PyptoTypeError
from pypto.ir import TensorType, Var
from pypto.ir.op import tensor
from pypto.ir.types import static_shape
from pypto.runtime import run

STRATEGIES = ["Default", "PTOAS"]
RNG = np.random.default_rng(11)


def _clean(r) -> None:
    bad = [f for f in r.findings if getattr(f, "severity", "") == "error" or "race" in getattr(f, "kind", "")]
    assert not bad, bad


@needs_emulator
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_tile_level_broadcast_forms(strategy):
    x, r, c = (RNG.standard_normal(s).astype(np.float32) for s in ((16, 32), (1, 32), (16, 1)))
    c = c + np.float32(3.0)  # keep the divisor-free operand away from zero for the div check
    outs = [np.zeros((16, 32), np.float32) for _ in range(4)]
    res = run(program_file("broadcast").TileForms, x, r, c, *outs, entry="k", strategy=strategy)
    if strategy == "Default":
        _clean(res)
    want = (r - x, np.maximum(x, c), c / x, c - r)
    for name, w in zip(("o1", "o2", "o3", "o4"), want, strict=False):
        np.testing.assert_allclose(res.arrays[name], w, rtol=1e-5, atol=1e-6)


@needs_emulator
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_tensor_level_broadcast_forms(strategy):
    x, r, c = (RNG.standard_normal(s).astype(np.float32) for s in ((32, 64), (1, 64), (32, 1)))
    res = run(program_file("broadcast").TensorForms, x, r, c, strategy=strategy)
    if strategy == "Default":
        _clean(res)
    np.testing.assert_allclose(res.outputs[0], r - x, rtol=1e-6)
    np.testing.assert_allclose(res.outputs[1], c * r, rtol=1e-6)


def _t(shape: list, name: str = "t") -> Var:
    return Var(name, TensorType(shape, DataType.FP32))


def test_tensor_structural_op_deduction():
    assert static_shape(tensor.transpose(_t([4, 8, 16]), 0, -1).type) == (16, 8, 4)
    assert static_shape(tensor.reshape(_t([4, 8]), [32]).type) == (32,)
    assert static_shape(tensor.assemble(_t([64, 32]), _t([16, 32], "s"), [48, 0]).type) == (64, 32)
    with pytest.raises(PyptoTypeError, match="leaves target"):
        tensor.assemble(_t([64, 32]), _t([16, 32], "s"), [56, 0])
    with pytest.raises(PyptoTypeError, match="32 elements, not 30"):
        tensor.reshape(_t([4, 8]), [5, 6])
    with pytest.raises(PyptoTypeError, match="must be two different"):
        tensor.transpose(_t([4, 8]), 1, -1)
