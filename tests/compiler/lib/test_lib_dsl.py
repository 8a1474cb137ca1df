"""``pl.<name>`` on tensors reaches pypto.lib from DSL code: in an InCore function and in an incore
scope; the kernel's .pto holds only tile instructions (the view casts became TLOAD/TSTORE)."""

import numpy as np
from lib_dsl_programs import C, DynamicRows, InCoreKernel, IncoreScope, R

from pypto import ir
from pypto.runtime import run


def _softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _inputs():
    rng = np.random.default_rng(0)
    return rng.standard_normal((R, C)).astype(np.float32), rng.uniform(0.5, 1.5, C).astype(np.float32)


def test_library_calls_in_an_incore_function():
    x, g = _inputs()
    got = run(InCoreKernel, x, g).outputs[0]
    want = np.maximum(_softmax(x), 0) * g + x.mean(-1, keepdims=True)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_library_calls_on_a_dynamic_row_count():
    """``pl.dynamic`` rows: one program for every row count (1, R, more than one row block)."""
    rng = np.random.default_rng(1)
    g = rng.uniform(0.5, 1.5, C).astype(np.float32)
    for rows in (1, R, 300):
        x = rng.standard_normal((rows, C)).astype(np.float32)
        got = run(DynamicRows, x, g).outputs[0]
        want = np.maximum(_softmax(x), 0) * g + x.mean(-1, keepdims=True)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_library_calls_in_an_incore_scope():
    x, w = _inputs()
    got = run(IncoreScope, x, w).outputs[0]
    y = x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-6) * w
    np.testing.assert_allclose(got, 1 / (1 + np.exp(-y)), rtol=1e-5, atol=1e-6)


def test_kernel_text_has_loads_and_stores_not_view_casts(tmp_path):
    ir.compile(InCoreKernel, output_dir=str(tmp_path))
    text = (tmp_path / "kernels" / "aiv" / "kern.pto").read_text()
    assert "pto.tload" in text and "pto.tstore" in text and "trowmax" in text
    assert "cast_tensor_to_tile" not in text and "cast_tile_to_tensor" not in text
