"""``pl.static_assert(cond, "message")`` and ``pl.static_print(...)`` run while a jit body is parsed
(spec pypto-jit §1.1): a false assertion is an error at its line, a run-time condition is refused,
static_print prints the folded values. Both were "unknown op". A Python list indexed by a loop
variable says that the index is a run-time value (it was "CompileError: TypeError: list indices must
be integers or slices, not Var"); a constant index works."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import PyptoError

OFFS = [0, 8, 24]
SIZES = (8, 16, 8)


@pl.jit
def three_pieces(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    rows, cols = x.shape
    pl.static_assert(rows == 32, "three_pieces needs 32 rows")
    pl.static_print("rows", rows, "cols", cols)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="pieces"):
        pl.store(pl.muls(pl.load(x, [OFFS[0], 0], [SIZES[0], cols]), 1.0), [OFFS[0], 0], y)
        pl.store(pl.muls(pl.load(x, [OFFS[1], 0], [SIZES[1], cols]), 2.0), [OFFS[1], 0], y)
        pl.store(pl.muls(pl.load(x, [OFFS[2], 0], [SIZES[2], cols]), 3.0), [OFFS[2], 0], y)


@pl.jit
def run_time_condition(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    pl.static_assert(pl.read(x, [0, 0]) > 0.0, "positive")


@pl.jit
def list_by_loop_variable(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    for i in pl.unroll(3):
        with pl.at(level=pl.Level.CORE_GROUP):
            pl.store(pl.load(x, [OFFS[i], 0], [8, 16]), [OFFS[i], 0], y)


def test_static_assert_and_print_while_parsing(capsys):
    x = np.random.default_rng(2).standard_normal((32, 16)).astype(np.float32)
    y = np.zeros_like(x)
    three_pieces(x, y)
    np.testing.assert_allclose(y, x * np.repeat([1.0, 2.0, 3.0], SIZES)[:, None], rtol=1e-6)
    line = three_pieces.__wrapped__.__code__.co_firstlineno + 4
    assert f"{__file__}:{line}: rows 32 cols 16" in capsys.readouterr().out
    with pytest.raises(PyptoError, match="static assertion failed: three_pieces needs 32 rows") as info:
        three_pieces(np.zeros((16, 16), np.float32), np.zeros((16, 16), np.float32))
    assert f"{__file__}:{line - 1}:" in str(info.value)


def test_run_time_conditions_and_list_indices_are_refused():
    x = np.ones((16, 16), np.float32)
    with pytest.raises(PyptoError, match="needs a condition known while parsing"):
        run_time_condition(x, np.zeros_like(x))
    with pytest.raises(PyptoError, match="'OFFS' is a Python list .* 'i' is a run-time value"):
        list_by_loop_variable(np.ones((32, 16), np.float32), np.zeros((32, 16), np.float32))
