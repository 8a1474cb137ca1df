"""``pl.RUNTIME`` and signature-mode ``compile()`` (spec pypto-jit §2.6): a scalar parameter whose
default is pl.RUNTIME, or that ``compile()`` is given pl.RUNTIME for, stays a run-time parameter of the compiled program and out of
the cache key: one program serves every value, and a call (or the compiled program called in place, or
execute_compiled) passes its value. It did not exist ("module 'pypto.language' has no attribute
'RUNTIME'"), and a CompiledProgram was not callable. pl.RUNTIME as a call argument is a TypeError.
``compile()`` with no arguments takes the shapes from the annotations (it was "missing a required
argument"); a bare pl.Tensor parameter is then a TypeError naming it."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

import pypto.language as pl
from pypto.runtime import RunConfig, execute_compiled


@pl.jit
def scale(x: pl.Tensor, y: pl.Out[pl.Tensor], alpha: pl.Scalar[pl.FP32] = pl.RUNTIME):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="scale"):
        y[:, :] = pl.mul(x, alpha)


@pl.jit
def first_rows(x: pl.Tensor, y: pl.Out[pl.Tensor], n: pl.Scalar[pl.INDEX], bias: float):
    for r in pl.range(n):
        xr = x[r:r + 1, :]
        yr = y[r:r + 1, :]
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="row"):
            yr[:, :] = pl.add(xr, bias)


def _x(rows: int = 16) -> np.ndarray:
    return np.random.default_rng(51).standard_normal((rows, 32)).astype(np.float32)


def test_a_runtime_default_compiles_once_for_every_value():
    x = _x()
    for alpha in (2.0, -0.5, 3.0):
        y = np.zeros_like(x)
        scale(x, y, alpha)
        np.testing.assert_allclose(y, np.float32(alpha) * x, rtol=1e-6)
    assert len(scale._cache) == 1
    with pytest.raises(TypeError, match="pl.RUNTIME is a compile-time marker"):
        scale(x, np.zeros_like(x), pl.RUNTIME)


def test_compile_with_runtime_and_call_the_program_in_place():
    x = _x()
    compiled = first_rows.compile(x, x, n=pl.RUNTIME, bias=1.5)
    assert compiled.param_names == ["x", "y", "n", "bias"]
    for n in (3, 16):
        y = np.zeros_like(x)
        compiled(x, y, n, 1.5)
        np.testing.assert_allclose(y[:n], x[:n] + 1.5, rtol=1e-6)
        assert not y[n:].any()
    with pytest.raises(TypeError, match="takes 4 arguments"):
        compiled(x, np.zeros_like(x), 3)
    with pytest.raises(TypeError, match="'bias' was compiled as the constant 1.5, got 2.5"):
        compiled(x, np.zeros_like(x), 3, 2.5)


def test_execute_compiled_passes_runtime_scalars_by_position(tmp_path, monkeypatch):
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path))
    x = _x()
    compiled = first_rows.compile(x, x, n=pl.RUNTIME, bias=-1.0, config=RunConfig(platform="a2a3sim"))
    y = np.zeros_like(x)
    execute_compiled(compiled.output_dir, [x, y, ctypes.c_int64(5), -1.0], platform="a2a3sim")
    np.testing.assert_allclose(y[:5], x[:5] - 1.0, rtol=1e-6)
    assert not y[5:].any()


R = pl.dynamic("R")


@pl.jit
def scale_annotated(x: pl.Tensor[[R, 32], pl.FP32], y: pl.Out[pl.Tensor[[R, 32], pl.FP32]],
                    alpha: pl.Scalar[pl.FP32] = pl.RUNTIME):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="scale"):
        y[:, :] = pl.mul(x, alpha)


def test_signature_mode_compile_takes_shapes_from_the_annotations():
    compiled = scale_annotated.compile()  # no arguments: the annotations say it all
    x = _x(11)
    y = np.zeros_like(x)
    compiled(x, y, 0.5)
    np.testing.assert_allclose(y, 0.5 * x, rtol=1e-6)
    assert scale_annotated.compile() is compiled
    y = np.zeros_like(x)
    scale_annotated(x, y, 4.0)  # a call with arrays finds the same program (dynamic rows, run-time alpha)
    np.testing.assert_allclose(y, 4.0 * x, rtol=1e-6)
    assert len(scale_annotated._cache) == 1
    with pytest.raises(TypeError, match="parameter 'x' is not fully annotated"):
        scale.compile()
