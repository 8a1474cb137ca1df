"""The flash-attention workload of benchmarks/timing_fidelity.py (benchmarks/kernels/flash_attention.py:
cube QK^T and PV on the AIC, online softmax on the two AIVs, hand-offs through an explicit
l2g2l pipe) computes attention: checked against NumPy at small sizes, with its hand-written
synchronisation race-checked, and with the cube and vector cores, and M and FIX, really
overlapping."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

import pyptoemu


def _module():
    path = Path(__file__).resolve().parents[3] / "benchmarks" / "kernels" / "flash_attention.py"
    spec = importlib.util.spec_from_file_location("bench_flash_attention", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("bench_flash_attention", module)
    spec.loader.exec_module(module)
    return module


FA = _module()


@pytest.mark.parametrize(("s0", "s1", "d"), [(32, 256, 32), (32, 1024, 64)])
def test_flash_attention_matches_numpy(s0, s1, d):
    rng = np.random.default_rng(s1 + d)
    q, k, v = (rng.standard_normal(shape).astype(np.float16) for shape in ((s0, d), (s1, d), (s1, d)))
    ws = np.zeros(FA.workspace_elems(d, s0), np.float32)
    r = pyptoemu.run(FA.flash_attention_kernel(s0, s1, d), inputs={"arg0": q, "arg1": k, "arg2": v, "arg4": ws},
                     keep_log=True)
    assert r.findings == []  # races are errors: the explicit flags and barriers order every hazard
    # P travels to the cube as fp16: about 1e-3 relative per element
    np.testing.assert_allclose(r.outputs["arg3"].reshape(s0, d), FA.reference(q, k, v), rtol=5e-3, atol=2e-3)
    tiles = s1 // FA.T
    busy = {c.id: c.pipes for c in r.cores}
    # on the cube, per T-key piece: one QK^T matmul and one PV matmul per PV_CHUNK keys
    assert busy["AIC0"]["M"].instructions == tiles * (1 + FA.T // FA.PV_CHUNK)
    # on each vector core: a pop per S piece, and one per logical tile (PIECES pieces) of PV summed by the cube
    assert busy["AIV0"]["MTE2"].instructions == busy["AIV1"]["MTE2"].instructions == tiles + tiles // FA.PIECES
    log = {c.label: c.trace_log for c in r.chip.cores}
    cube_mm = [(i.start, i.end) for i in log["AIC0"] if i.pipe == "M" and i.name.startswith("tmatmul")]
    if tiles >= 2 * FA.PIECES:
        # with two logical tiles the cores run concurrently: some cube matmul runs while a vector core
        # computes (QK of tile j + 1 beside the softmax of tile j); one tile is a chain of dependences
        vec_ops = [(i.start, i.end) for i in log["AIV0"] if i.pipe == "V" and i.end > i.start]
        assert any(a < d and c < b for a, b in cube_mm for c, d in vec_ops)
    if tiles >= 8:
        # each L0C accumulator is released by its own flag: a matmul into one runs while FIX pushes
        # the other (one flag for all of FIX serialised them)
        pushes = [(i.start, i.end) for i in log["AIC0"] if i.pipe == "FIX" and i.name == "tpush" and i.end > i.start]
        assert any(a < d and c < b for a, b in cube_mm for c, d in pushes)


def test_flash_attention_fp16_exp_path_matches_numpy():
    """shift_f32=False: S rounded to fp16 before the shift by the row max, all of P in fp16 (one
    fp16 rounding of S more than the default, about 5e-4 relative on each score)."""
    s0, s1, d = 32, 512, 64
    rng = np.random.default_rng(3)
    q, k, v = (rng.standard_normal(shape).astype(np.float16) for shape in ((s0, d), (s1, d), (s1, d)))
    ws = np.zeros(FA.workspace_elems(d, s0), np.float32)
    r = pyptoemu.run(FA.flash_attention_kernel(s0, s1, d, shift_f32=False),
                     inputs={"arg0": q, "arg1": k, "arg2": v, "arg4": ws})
    assert r.findings == []
    np.testing.assert_allclose(r.outputs["arg3"].reshape(s0, d), FA.reference(q, k, v), rtol=5e-3, atol=2e-3)
