"""A negative ``--seed`` (or ``pyptoemu.run(..., seed=-1)``) reached NumPy's seed sequence when the
first stand-in input was drawn and ended in an internal error (exit 3, 'expected non-negative
integer'); it is bad input (exit 2) said before anything runs."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

import pyptoemu
from pyptoemu.cli import main
from pyptoemu.errors import InputError

VADD = Path(__file__).resolve().parents[2] / "examples" / "vadd_32x32.pto"


def test_negative_seed_on_the_command_line_is_exit_2(tmp_path):
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(["run", "-q", str(VADD), "--seed", "-1", "--output-dir", str(tmp_path)])
    assert code == 2 and "seed must be a non-negative integer, not -1" in err.getvalue()
    assert "internal error" not in err.getvalue()


@pytest.mark.parametrize("seed", [-1, True, 1.5])
def test_a_seed_that_is_not_a_non_negative_integer_raises_input_error(seed):
    with pytest.raises(InputError, match="seed must be a non-negative integer"):
        pyptoemu.run(VADD, seed=seed)


def test_seed_zero_and_large_seeds_run():
    assert pyptoemu.run(VADD, seed=0).cycles == pyptoemu.run(VADD, seed=2**70).cycles
