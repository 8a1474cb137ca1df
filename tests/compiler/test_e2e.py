"""Examples compiled and run on the emulator: race-free under Default, NumPy-exact under both strategies."""

import numpy as np
import pytest
from conftest import example, needs_emulator, program_file

from pypto.runtime import run

pytestmark = needs_emulator
RNG = np.random.default_rng(0)
STRATEGIES = ["Default", "PTOAS"]


def _races(result):
    return [f for f in result.findings if getattr(f, "severity", "") == "error" or "race" in getattr(f, "kind", "")]


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_tile_add(strategy):
    x, y = RNG.standard_normal((128, 128), dtype=np.float32), RNG.standard_normal((128, 128), dtype=np.float32)
    r = run(example("tile_add").TileAdd, x, y, strategy=strategy)
    assert not _races(r)
    np.testing.assert_allclose(r.outputs[0], x + y + 1.0, rtol=1e-6)
    assert r.cycles > 0 and "V" in r.pipes


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_matmul(strategy):
    a = RNG.standard_normal((64, 128)).astype(np.float16)
    b = RNG.standard_normal((128, 64)).astype(np.float16)
    r = run(example("matmul").Gemm, a, b, strategy=strategy)
    assert not _races(r)
    np.testing.assert_allclose(r.outputs[0], a.astype(np.float32) @ b.astype(np.float32), rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_row_softmax(strategy):
    x = RNG.standard_normal((256, 64), dtype=np.float32)
    r = run(example("row_softmax").RowSoftmax, x, strategy=strategy)
    assert not _races(r)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(r.outputs[0], e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_iter_args_and_if(strategy):
    x = RNG.standard_normal((128, 64), dtype=np.float32)
    r = run(example("iter_args_if").BlockSum, x, 0.5, strategy=strategy)
    assert not _races(r)
    np.testing.assert_allclose(r.outputs[0], x[:32] + 0.5 * (x[32:64] + x[64:96] + x[96:]), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_seed000_programs(strategy):
    mod = program_file("seed000")
    a, b = RNG.standard_normal((32, 32), dtype=np.float32), RNG.standard_normal((32, 32), dtype=np.float32)
    a0 = a.copy()
    r = run(mod.MyKernel, a, b, strategy=strategy)  # a is InOut: updated in place (spec §10.3)
    assert not _races(r) and r.outputs == ()
    np.testing.assert_allclose(r.arrays["a"], a0 + b, rtol=1e-6)
    np.testing.assert_allclose(a, a0 + b, rtol=1e-6)
    r = run(mod.MulKernel, a, b, np.zeros((32, 32), np.float32), strategy=strategy)
    np.testing.assert_allclose(r.arrays["c"], a * b, rtol=1e-6)
    r = run(mod.KeywordForms, a, strategy=strategy)  # trailing Out parameter omitted
    np.testing.assert_allclose(r.outputs[0], a * 2.0, rtol=1e-6)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_builder_programs(strategy):
    from programs import builder_examples as bx

    a, b = RNG.random((128, 128), dtype=np.float32), RNG.random((128, 128), dtype=np.float32)
    r = run(bx.block_computation(), a, b, strategy=strategy)
    assert not _races(r)
    np.testing.assert_allclose(r.outputs[0][:32], np.sqrt(a[:32] * b[:32]).sum(axis=1, keepdims=True), rtol=1e-5)
    src = RNG.standard_normal((16, 64), dtype=np.float32)
    np.testing.assert_allclose(run(bx.halve(), src, strategy=strategy).outputs[0], src * 0.5)
    x = RNG.standard_normal((64, 32), dtype=np.float32)
    r = run(bx.loop_with_iter_arg(), x, strategy=strategy)
    assert not _races(r)
    np.testing.assert_allclose(r.outputs[0], x.reshape(4, 16, 32).sum(axis=0), rtol=1e-5, atol=1e-6)


def test_trace_is_written(tmp_path):
    x = np.ones((128, 128), np.float32)
    r = run(example("tile_add").TileAdd, x, x, trace=str(tmp_path / "t.json"))
    assert r.trace is not None
