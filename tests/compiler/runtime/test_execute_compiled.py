"""pypto-lib's harness flow (spec pypto-jit §10.4): ``fn.compile(*dummies, config=RunConfig(platform=
"a2a3"))``, then ``pypto.runtime.execute_compiled(compiled.output_dir, args, platform=..., device_id=0)``
updates the NumPy / torch arguments in place; ``_DfxOpts`` and ``configure_log`` exist."""

from __future__ import annotations

import ctypes
import logging
import os

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import RuntimeFault
from pypto.runtime import RunConfig, execute_compiled
from pypto.runtime.log_config import configure_log
from pypto.runtime.runner import _DfxOpts


@pl.jit
def scaled_sum(a: pl.Tensor, b: pl.Tensor, y: pl.Out[pl.Tensor], scale: float):
    with pl.at(level=pl.Level.CORE_GROUP):
        y = pl.add(a, pl.mul(b, scale))
    return y


def _harness_compile(tmp_path, monkeypatch):
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path))
    dummies = (np.empty((16, 64), np.float32), np.empty((16, 64), np.float32), np.empty((16, 64), np.float32))
    return scaled_sum.compile(*dummies, 0.5, config=RunConfig(platform="a2a3"))


def test_execute_compiled_updates_numpy_args_in_place(tmp_path, monkeypatch):
    compiled = _harness_compile(tmp_path, monkeypatch)
    out_dir = compiled.output_dir
    assert out_dir.parent == tmp_path and any((out_dir / "kernels").glob("*.pto"))
    assert os.fspath(compiled) == str(out_dir)
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((16, 64), dtype=np.float32), rng.standard_normal((16, 64), dtype=np.float32)
    y = np.zeros((16, 64), np.float32)
    r = execute_compiled(out_dir, [a, b, y, ctypes.c_double(0.5)], platform="a2a3", device_id=0,
                         dfx=_DfxOpts(enable_pmu=1))
    np.testing.assert_allclose(y, a + b * np.float32(0.5), rtol=1e-6)
    assert r.cycles > 0


def test_execute_compiled_updates_torch_args_in_place(tmp_path, monkeypatch):
    torch = pytest.importorskip("torch")
    compiled = _harness_compile(tmp_path, monkeypatch)
    a, b = torch.randn(16, 64), torch.randn(16, 64)
    y = torch.zeros(16, 64)
    execute_compiled(str(compiled.output_dir), [a, b, y, 0.5], platform="a2a3", device_id=0)
    np.testing.assert_allclose(y.numpy(), (a + 0.5 * b).numpy(), rtol=1e-6)


def test_unknown_dir_and_wrong_tensor_count_are_refused(tmp_path, monkeypatch):
    compiled = _harness_compile(tmp_path, monkeypatch)
    with pytest.raises(RuntimeFault, match="no program was compiled into"):
        execute_compiled(tmp_path / "elsewhere", [], platform="a2a3", device_id=0)
    with pytest.raises(TypeError, match="takes 3 tensors"):
        execute_compiled(compiled.output_dir, [np.zeros((16, 64), np.float32)], platform="a2a3", device_id=0)


def test_configure_log_sets_the_pypto_logger_level():
    old = logging.getLogger("pypto").level
    try:
        assert configure_log("debug").level == logging.DEBUG
        assert logging.getLogger("pypto").level == logging.DEBUG
        with pytest.raises(ValueError, match="unknown level"):
            configure_log("loud")
    finally:
        logging.getLogger("pypto").setLevel(old)
