"""A kernel that faults at run time names the user's source line, not a line of the generated .pto."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import PyptoTypeError
from pypto.ops import block as block_ops
from pypto.runtime import run
from pyptoemu.errors import BoundsError, VerifyError

ROWS = 16


@pl.jit
def ragged_exp(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    rows, cols = x.shape
    for r in pl.range(0, rows, ROWS):
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(x, [r, 0], [ROWS, cols])
            pl.store(pl.exp(t), [r, 0], y)


def test_out_of_bounds_load_on_the_last_chunk_points_at_the_load():
    x = np.ones((40, 32), np.float32)  # 40 rows: the third 16-row chunk runs past the end
    with pytest.raises(BoundsError, match=r"window \[32, 48\) is outside") as info:
        ragged_exp(x, np.zeros_like(x))
    line = ragged_exp.__wrapped__.__code__.co_firstlineno + 5
    assert str(info.value).startswith(f"{__file__}:{line}:")
    assert "<string>" not in str(info.value)


def test_rows_that_divide_the_chunk_still_run():
    x = np.random.default_rng(3).standard_normal((48, 32)).astype(np.float32)
    y = np.zeros_like(x)
    ragged_exp(x, y)
    np.testing.assert_allclose(y, np.exp(x), rtol=1e-5)


@pl.program
class ShiftRows:
    @pl.function(type=pl.FunctionType.InCore)
    def kern(self, x: pl.Tensor[[40, 32], pl.FP32], y: pl.Out[pl.Tensor[[40, 32], pl.FP32]],
             r: pl.Scalar[pl.INDEX]) -> pl.Tensor[[40, 32], pl.FP32]:
        t = pl.load(x, [r, 0], [16, 32])
        y = pl.store(pl.muls(t, 2.0), [r, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[40, 32], pl.FP32],
             y: pl.Out[pl.Tensor[[40, 32], pl.FP32]]) -> pl.Tensor[[40, 32], pl.FP32]:
        for r in pl.range(0, 40, 16):
            y = self.kern(x, y, r)
        return y


def test_seed_era_program_fault_points_at_the_load_too():
    with pytest.raises(BoundsError, match=r"window \[32, 48\) is outside .*in kernel 'kern'") as info:
        run(ShiftRows, np.ones((40, 32), np.float32))
    source = Path(__file__).read_text().splitlines()
    line = 1 + next(i for i, s in enumerate(source) if "t = pl.load(x, [r, 0], [16, 32])" in s)
    assert str(info.value).startswith(f"{__file__}:{line}:")


@pl.jit
def xor_own_scratch(a: pl.Tensor, b: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="x"):
        ta = pl.load(a, [0, 0], [16, 16])
        tb = pl.load(b, [0, 0], [16, 16])
        pl.store(pl.xor(ta, tb, ta), [0, 0], y)


def test_a_scratch_tile_that_is_also_a_source_is_refused_at_the_users_line():
    a, b = np.arange(256, dtype=np.int16).reshape(16, 16), np.full((16, 16), 7, np.int16)
    line = xor_own_scratch.__wrapped__.__code__.co_firstlineno + 5
    with pytest.raises(PyptoTypeError, match="pl.xor: the scratch tile 'tmp' is also an operand it reads") as info:
        xor_own_scratch(a, b, np.zeros_like(a))
    assert str(info.value).startswith(f"{__file__}:{line}:")


@pl.jit
def xor_own_scratch_unchecked(a: pl.Tensor, b: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="x"):
        ta = pl.load(a, [0, 0], [16, 16])
        tb = pl.load(b, [0, 0], [16, 16])
        pl.store(pl.xor(ta, tb, ta), [0, 0], y)


def test_a_check_only_the_emulator_makes_names_the_users_line(monkeypatch):
    """Without the compiler's own check, the emulator's verifier refuses the generated .pto: its error was
    raised at '<string>:22:5' (a line of the generated text), now at the user's line."""
    monkeypatch.setattr(block_ops, "check_own_scratch", lambda *a: None)
    a, b = np.arange(256, dtype=np.int16).reshape(16, 16), np.full((16, 16), 7, np.int16)
    line = xor_own_scratch_unchecked.__wrapped__.__code__.co_firstlineno + 5
    with pytest.raises(VerifyError, match="the scratch operand tmp is") as info:
        xor_own_scratch_unchecked(a, b, np.zeros_like(a))
    assert str(info.value).startswith(f"{__file__}:{line}:"), str(info.value)
    assert "generated .pto line" in str(info.value) and "<string>" not in str(info.value)
