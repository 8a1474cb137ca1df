"""Host code (an Orchestration or Opaque function) that rebinds an Out/InOut tensor parameter
(``acc = pl.add(acc, ...)`` inside ``with pl.incore():``, seed 003 §4.3's fused_update) must leave the
final value in the caller's buffer: an inout is passed by reference. The returned value was right but
the InOut buffer kept its old contents (a silent wrong number for a caller that reads it)."""

from __future__ import annotations

import numpy as np

import pypto.language as pl
from pypto.runtime import run

R, C = 37, 130


@pl.program
class FusedUpdate:
    @pl.function
    def main(self, x: pl.Tensor[[R, C], pl.FP32], y: pl.Tensor[[R, C], pl.FP32],
             acc: pl.InOut[pl.Tensor[[R, C], pl.FP32]]) -> pl.Tensor[[R, 1], pl.FP32]:
        with pl.incore():
            acc = pl.add(acc, pl.mul(x, 0.5))
            out = pl.add(y, acc)
        result = pl.add(pl.sum(out, -1, keepdim=True), pl.sum(acc, -1, keepdim=True))
        return result


@pl.program
class ScaleInPlace:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.InOut[pl.Tensor[[R, C], pl.FP32]], y: pl.Out[pl.Tensor[[R, C], pl.FP32]]):
        y = pl.exp(x)  # noqa: F841  (an Out parameter: its final value is the output)
        x = pl.mul(x, 2.0)


def _normal(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((R, C)).astype(np.float32)


def test_inout_rebound_in_an_incore_scope_reaches_the_caller():
    x, y, acc = _normal(70), _normal(71), _normal(72)
    new_acc = acc + np.float32(0.5) * x  # before the run: run() updates acc in place (spec §10.3)
    r = run(FusedUpdate, x, y, acc)
    want = (y + new_acc).sum(axis=1, keepdims=True) + new_acc.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(r.outputs[0], want, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(r.arrays["acc"], new_acc, rtol=1e-6)
    np.testing.assert_allclose(acc, new_acc, rtol=1e-6)


def test_out_and_inout_rebound_by_tensor_ops_in_orchestration_without_return():
    x = _normal(73)
    x0 = x.copy()  # run() updates x in place (spec §10.3)
    r = run(ScaleInPlace, x, np.zeros_like(x))
    np.testing.assert_allclose(r.arrays["y"], np.exp(x0), rtol=1e-6)
    np.testing.assert_allclose(r.arrays["x"], 2 * x0, rtol=1e-6)
