"""The two complete kernels of pto-text-format.md Appendix B, verbatim, run and match NumPy."""

from __future__ import annotations

from pathlib import Path

import numpy as np

import pyptoemu

DATA = Path(__file__).resolve().parents[1] / "ptoisa" / "text" / "data"


def test_appendix_b_softmax_without_sync_runs_with_inserted_sync():
    x = np.random.default_rng(0).standard_normal((48, 64)).astype(np.float32)
    r = pyptoemu.run(DATA / "appendix_b_softmax.pto", inputs={"arg0": x}, args={"arg2": 48})
    assert r.sync_mode == "auto" and r.findings == []
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(r.outputs["arg1"].reshape(48, 64), e / e.sum(axis=1, keepdims=True),
                               rtol=1e-5, atol=1e-7)


def test_appendix_b_mm16_with_explicit_flags():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((16, 16)).astype(np.float16)
    b = rng.standard_normal((16, 16)).astype(np.float16)
    r = pyptoemu.run(DATA / "appendix_b_mm16.pto", inputs={"arg0": a, "arg1": b})
    assert r.sync_mode == "asis" and r.findings == []
    np.testing.assert_allclose(r.outputs["arg2"], a.astype(np.float32) @ b.astype(np.float32), rtol=1e-3,
                               atol=1e-3)
