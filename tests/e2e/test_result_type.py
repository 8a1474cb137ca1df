"""``pyptoemu.run`` and ``pypto.runtime.run`` return one result type and judge inputs alike."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pyptoemu
from examples.tile_add import N, TileAdd
from pypto.runtime import run as run_program

VADD = Path(__file__).resolve().parents[2] / "examples" / "vadd_32x32.pto"


def test_wrong_dtype_gets_the_same_answer_from_both_apis():
    x64 = np.ones((N, N))
    with pytest.raises(pyptoemu.InputError) as kernel_err:
        pyptoemu.run(VADD, inputs={"arg0": np.ones((32, 32))})
    with pytest.raises(pyptoemu.InputError) as program_err:
        run_program(TileAdd, x64, np.ones((N, N), np.float32))
    for err in (kernel_err.value, program_err.value):
        assert "dtype float64" in str(err) and "float32" in str(err)
    # lists are converted in both (documented): same numbers as float32 arrays
    listed = pyptoemu.run(VADD, inputs={"arg0": [[1.0] * 32] * 32, "arg1": np.ones((32, 32), np.float32)})
    assert np.all(listed.outputs["arg2"] == 2.0)


def test_program_result_is_the_same_type():
    a = np.arange(N * N, dtype=np.float32).reshape(N, N)
    r = run_program(TileAdd, a, a)
    assert isinstance(r, pyptoemu.RunResult) and r.status == "ok" and r.launches >= 1
    assert r.time_us == pytest.approx(r.cycles / 1850.0) and r.bound_pipe in r.pipes
    assert "[[" not in repr(r)
    np.testing.assert_array_equal(r.outputs[0], a + a + 1)
