"""``pypto.runtime.run`` per spec pypto-jit §10.3: it runs in place on the caller's arrays, takes
``config=RunConfig(...)`` (the platform picks the machine, as in a jit call), and returns an object
callable like a CompiledProgram that also is the run's ``RunResult``."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
import pyptoemu
from ptoisa.machine import load_machine
from pypto.runtime import ProgramRun, RunConfig, run

N = 32


@pl.program
class AddOne:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[N, N], pl.FP32], y: pl.Tensor[[N, N], pl.FP32],
               z: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        tx: pl.Tile[[N, N], pl.FP32] = pl.load(x, [0, 0], [N, N])
        ty: pl.Tile[[N, N], pl.FP32] = pl.load(y, [0, 0], [N, N])
        t: pl.Tile[[N, N], pl.FP32] = pl.add(pl.add(tx, ty), 1.0)
        z_out: pl.Tensor[[N, N], pl.FP32] = pl.store(t, [0, 0], z)
        return z_out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[N, N], pl.FP32], y: pl.Tensor[[N, N], pl.FP32],
             z: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        z = self.kernel(x, y, z)
        return z


def _inputs() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(14)
    return rng.standard_normal((N, N), dtype=np.float32), rng.standard_normal((N, N), dtype=np.float32)


def test_numpy_out_array_is_filled_in_place_and_the_result_carries_run_fields():
    x, y = _inputs()
    x0 = x.copy()
    z = np.zeros((N, N), np.float32)
    r = run(AddOne, x, y, z)
    np.testing.assert_allclose(z, x + y + 1, rtol=1e-6)
    np.testing.assert_array_equal(x, x0)  # inputs are read, not written
    assert isinstance(r, ProgramRun) and isinstance(r, pyptoemu.RunResult)
    assert r.status == "ok" and r.cycles > 0 and r.arrays["z"] is z
    np.testing.assert_allclose(r.outputs[0], x + y + 1, rtol=1e-6)


def test_run_without_tensors_returns_the_callable_and_calling_it_runs():
    compiled = run(AddOne, config=RunConfig(platform="a2a3"))
    with pytest.raises(AttributeError, match="has not run yet"):
        _ = compiled.cycles
    x, y = _inputs()
    out = compiled(x, y)  # return style: the pure Out parameter is allocated and returned
    np.testing.assert_allclose(out, x + y + 1, rtol=1e-6)
    assert compiled.cycles > 0 and compiled.output_indices == [2]
    z = np.full((N, N), 7.0, np.float32)
    assert compiled(x, y, z) is None  # in-place style
    np.testing.assert_allclose(z, x + y + 1, rtol=1e-6)


def test_config_platform_selects_the_machine_and_codegen_only_does_not_run():
    x, y = _inputs()
    z = np.zeros((N, N), np.float32)
    r = run(AddOne, x, y, z, config=RunConfig(platform="a5sim"))
    assert r.machine == load_machine("a5").name != load_machine("a2a3").name
    np.testing.assert_allclose(z, x + y + 1, rtol=1e-6)
    z2 = np.zeros((N, N), np.float32)
    c = run(AddOne, x, y, z2, config=RunConfig(codegen_only=True))
    assert c.result is None and not z2.any()


def test_torch_out_tensor_is_written_in_place():
    torch = pytest.importorskip("torch")
    x, y = _inputs()
    z = torch.zeros((N, N), dtype=torch.float32)
    run(AddOne, torch.from_numpy(x), torch.from_numpy(y), z)
    np.testing.assert_allclose(z.numpy(), x + y + 1, rtol=1e-6)
