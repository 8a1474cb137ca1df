"""@pl.jit called with torch CPU tensors (the optional ``[torch]`` extra): shapes and dtypes come
from the tensors, pl.Out tensors are written in place (shared memory, no copy), a non-contiguous
Out is written back, bf16 tensors are read through their bits. Skipped when torch is not installed."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl

torch = pytest.importorskip("torch")


@pl.jit
def add_scale(a: pl.Tensor, b: pl.Tensor, y: pl.Out[pl.Tensor]):
    rows, cols = a.shape
    for r in pl.range(0, rows, 16):
        with pl.at(level=pl.Level.CORE_GROUP):
            ta = pl.load(a, [r, 0], [16, cols])
            tb = pl.load(b, [r, 0], [16, cols])
            pl.store(pl.mul(pl.add(ta, tb), 2.0), [r, 0], y)
    return y


@pl.jit
def widen(a: pl.Tensor, y: pl.Out[pl.Tensor]):
    rows, cols = a.shape
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.cast(pl.load(a, [0, 0], [rows, cols]), pl.FP32)
        pl.store(pl.add(t, 1.0), [0, 0], y)
    return y


def test_torch_tensors_in_and_out_in_place():
    g = torch.Generator().manual_seed(3)
    a, b = torch.randn(32, 64, generator=g), torch.randn(32, 64, generator=g)
    y = torch.zeros(32, 64)
    before = y.data_ptr()
    add_scale(a, b, y)
    assert y.data_ptr() == before
    np.testing.assert_allclose(y.numpy(), ((a + b) * 2).numpy(), rtol=1e-6, atol=1e-6)


def test_a_non_contiguous_out_tensor_is_written_back():
    g = torch.Generator().manual_seed(4)
    a, b = torch.randn(32, 64, generator=g), torch.randn(32, 64, generator=g)
    base = torch.zeros(64, 32)
    y = base.t()  # 32x64 view, not contiguous
    add_scale(a, b, y)
    np.testing.assert_allclose(base.t().numpy(), ((a + b) * 2).numpy(), rtol=1e-6, atol=1e-6)


def test_bf16_torch_input_is_read_through_its_bits():
    a = torch.randn(16, 64, generator=torch.Generator().manual_seed(5)).to(torch.bfloat16)
    y = torch.zeros(16, 64)
    widen(a, y)
    np.testing.assert_allclose(y.numpy(), a.float().numpy() + 1.0, rtol=1e-6)
