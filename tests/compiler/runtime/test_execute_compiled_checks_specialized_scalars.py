"""``execute_compiled`` with a specialized scalar (a Python number given at ``fn.compile``) other
than the one the program was compiled for: the value is baked into the kernels, so running would
silently use the compiled one (it did: a masked softmax compiled for 37 valid columns ran with 37
when given 20). It is refused, as the compiled program's own call refuses it."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

import pypto.language as pl
from pypto.runtime import RunConfig, execute_compiled


@pl.jit
def scale_rows(x: pl.Tensor, y: pl.Out[pl.Tensor], factor: float):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="scale_rows"):
        y[:, :] = pl.muls(x[:, :], factor)


def test_a_specialized_scalar_other_than_the_compiled_one_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path))
    x = np.random.default_rng(0).standard_normal((16, 32)).astype(np.float32)
    y = np.zeros_like(x)
    compiled = scale_rows.compile(x, y, 2.0, config=RunConfig(platform="a2a3"))
    execute_compiled(compiled.output_dir, [x, y, ctypes.c_double(2.0)], platform="a2a3", device_id=0)
    np.testing.assert_array_equal(y, x * 2)
    y[:] = 0
    with pytest.raises(TypeError, match=r"'factor' was compiled as the constant 2\.0, got 3\.0"):
        execute_compiled(compiled.output_dir, [x, y, 3.0], platform="a2a3", device_id=0)
    assert not y.any()  # nothing ran
