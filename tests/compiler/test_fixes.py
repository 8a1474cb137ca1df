"""Loop-carried accumulators, transposed moves, valid shapes, while loops, negative steps, promotion.

Each program runs under both strategies: race-free under Default, and equal to NumPy.
"""

import numpy as np
import pytest
from conftest import needs_emulator, program_file

from pypto.errors import CompileError
from pypto.ir.compiler import compile_program
from pypto.runtime import run

pytestmark = needs_emulator
STRATEGIES = ["Default", "PTOAS"]
RNG = np.random.default_rng(7)


def _run(cls: str, *args, strategy: str, entry: str = "k"):
    r = run(getattr(program_file("fixes"), cls), *args, entry=entry, strategy=strategy)
    if strategy == "Default":
        bad = [f for f in r.findings if getattr(f, "severity", "") == "error" or "race" in getattr(f, "kind", "")]
        assert not bad, bad
    return r


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_left_operand_from_transposed_move(strategy):
    at, b = RNG.standard_normal((32, 16), np.float32), RNG.standard_normal((32, 16), np.float32)
    r = _run("LeftTransposed", at, b, np.zeros((16, 16), np.float32), strategy=strategy)
    np.testing.assert_allclose(r.arrays["c"], at.T @ b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_vec_transposed_move(strategy):
    x = RNG.standard_normal((16, 32), np.float32)
    r = _run("VecTransposed", x, np.zeros((32, 16), np.float32), strategy=strategy)
    np.testing.assert_array_equal(r.arrays["y"], x.T + 1)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_accumulator_through_nested_loops_and_if(strategy):
    a, b = RNG.standard_normal((16, 128)).astype(np.float16), RNG.standard_normal((128, 32)).astype(np.float16)
    r = _run("NestedKLoop", a, b, np.zeros((16, 32), np.float32), strategy=strategy)
    np.testing.assert_allclose(r.arrays["c"], a.astype(np.float32) @ b.astype(np.float32), rtol=1e-4, atol=1e-3)


def test_accumulator_read_after_its_successor_is_rejected():
    with pytest.raises(CompileError, match="still read after its next value"):
        compile_program(program_file("fixes").AccReadAfterNext)


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("n", [16, 5])
def test_valid_shape_from_tensor_dim(strategy, n):
    x = RNG.standard_normal((n, 32), np.float32)
    r = _run("DimValid", x, np.zeros_like(x), strategy=strategy)
    np.testing.assert_array_equal(r.arrays["y"], x * 2)
    pto = compile_program(program_file("fixes").DimValid).pto["k"]
    assert "v_row=?" in pto and "valid_row = " in pto


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("lo,hi", [(0, 4), (1, 3), (2, 2)])
def test_negative_step_with_runtime_bounds(strategy, lo, hi):
    x = RNG.standard_normal((64, 32), np.float32)
    y = np.full((64, 32), -7.0, np.float32)
    want = y.copy()
    for b in range(hi - 1, lo - 1, -1):
        want[16 * b:16 * b + 16] = x[16 * b:16 * b + 16] * np.float32(b + 1)
    r = _run("CountDown", x, lo, hi, y, strategy=strategy)
    np.testing.assert_array_equal(r.arrays["y"], want)
    pto = compile_program(program_file("fixes").CountDown).pto["k"]
    assert "step %c_neg" not in pto


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_natural_while_carrying_two_scalars(strategy):
    x = RNG.standard_normal((16, 32), np.float32)
    r = _run("WhileTwoScalars", x, np.zeros_like(x), strategy=strategy)
    np.testing.assert_array_equal(r.arrays["y"], x * 8)
    assert "scf.while" in compile_program(program_file("fixes").WhileTwoScalars).pto["k"]


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_mixed_precision_tiles_promote(strategy):
    a, b = RNG.standard_normal((16, 32)).astype(np.float16), RNG.standard_normal((16, 32), np.float32)
    r = _run("MixedPrecision", a, b, np.zeros((16, 32), np.float32), np.zeros((16, 32), np.float16),
             strategy=strategy)
    np.testing.assert_allclose(r.arrays["y"], a.astype(np.float32) + b, rtol=1e-6)
    np.testing.assert_array_equal(r.arrays["z"], a * np.float16(0.5))
