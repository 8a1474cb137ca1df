"""@pl.jit calls: binding, the per-signature cache, in-place outputs, RunConfig, refused features."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import PyptoError
from pypto.runtime import RunConfig


@pl.jit
def scale_rows(x: pl.Tensor, y: pl.Out[pl.Tensor], factor: float):
    rows, cols = x.shape
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="scale"):
        t = pl.load(x, [0, 0], [rows, cols])
        pl.store(pl.muls(t, factor), [0, 0], y)


def test_scalar_argument_is_specialized_and_outputs_written_in_place():
    x = np.arange(16 * 32, dtype=np.float32).reshape(16, 32)
    y = np.zeros_like(x)
    scale_rows(x, y, 3.0)
    np.testing.assert_array_equal(y, x * 3.0)
    scale_rows(x, y, factor=-0.5)
    np.testing.assert_array_equal(y, x * -0.5)


def test_each_signature_compiles_once():
    x = np.ones((16, 32), np.float32)
    y = np.zeros_like(x)
    first = scale_rows.compile(x, y, 2.0)
    assert scale_rows.compile(x, y, 2.0) is first
    assert scale_rows.compile(np.zeros((16, 32), np.float32), y, 2.0) is first  # same shape/dtype: cached
    assert scale_rows.compile(x, y, 4.0) is not first  # a new scalar value specializes anew
    x2 = np.ones((32, 32), np.float32)
    other = scale_rows.compile(x2, np.zeros_like(x2), 2.0)
    assert other is not first
    y2 = np.zeros_like(x2)
    scale_rows(x2, y2, 2.0)
    np.testing.assert_array_equal(y2, 2.0)


def test_non_contiguous_output_is_written_back():
    x = np.random.default_rng(0).standard_normal((16, 32)).astype(np.float32)
    big = np.zeros((32, 32), np.float32)
    y = big[::2]  # a strided view: worked on as a copy, then copied back into the caller's view
    scale_rows(x, y, 2.0)
    np.testing.assert_allclose(big[::2], x * 2.0, rtol=1e-6)
    assert not big[1::2].any()


def test_binding_errors_name_the_function():
    x = np.ones((16, 32), np.float32)
    with pytest.raises(TypeError, match="@pl.jit function 'scale_rows'"):
        scale_rows(x, np.zeros_like(x))
    with pytest.raises(TypeError, match="unexpected keyword argument 'skip_ptoas'"):
        scale_rows.compile(x, x, 1.0, skip_ptoas=True)
    # a call's unexpected keyword was a bare Python TypeError (spec pypto-jit §2.4: prefixed too)
    with pytest.raises(TypeError, match="^@pl.jit function 'scale_rows': got an unexpected keyword argument 'z'"):
        scale_rows(x, np.zeros_like(x), 1.0, z=1)


def test_run_config_platforms():
    with pytest.raises(ValueError, match="platform"):
        RunConfig(platform="gpu")
    with pytest.raises(ValueError, match="ring_heap"):
        RunConfig(ring_heap=1000)
    x = np.ones((16, 32), np.float32)
    y5 = np.zeros_like(x)
    scale_rows(x, y5, 7.0, config=RunConfig(platform="a5sim"))  # isa_specs/machines/a5.yaml
    np.testing.assert_array_equal(y5, 7.0)
    assert scale_rows.last_result.machine == "a5"
    cfg = RunConfig(platform="a2a3", device_id=3, enable_pmu=1, save_kernels=True)
    y = np.zeros_like(x)
    scale_rows(x, y, 5.0, config=cfg)
    np.testing.assert_array_equal(y, 5.0)
    assert scale_rows.last_result.cycles > 0


@pl.jit.extern(source="kernels/my_kernel.cpp", core_type="aiv")
def external_kernel(x: pl.Tensor, y: pl.Out[pl.Tensor]): ...


@pl.jit.host
def multi_card(x: pl.Tensor): ...


def test_extern_and_host_are_refused_by_name():
    x = np.ones((4, 4), np.float32)
    with pytest.raises(NotImplementedError, match="external_kernel.*external kernels are not supported"):
        external_kernel(x, x)
    with pytest.raises(NotImplementedError, match="multi_card.*multi-card distribution is not supported"):
        multi_card(x)


def test_decorator_options_are_checked():
    with pytest.raises(TypeError, match="level"):
        pl.jit(level=pl.Level.AIC)
    assert pl.jit.incore(level=pl.Level.AIC) is not None


@pl.jit
def shape_mismatch(a: pl.Tensor, b: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [16, 16])
        tb = pl.load(b, [0, 0], [8, 16])
        pl.store(pl.add(ta, tb), [0, 0], y)


def test_shape_error_points_at_the_users_line():
    a = np.ones((16, 16), np.float32)
    with pytest.raises(PyptoError) as info:
        shape_mismatch(a, np.ones((8, 16), np.float32), np.zeros_like(a))
    msg = str(info.value)
    line = shape_mismatch.__wrapped__.__code__.co_firstlineno + 5  # the pl.add line
    assert f"test_jit_calls.py:{line}:" in msg, msg


@pl.jit
def wrong_level(x: pl.Tensor):
    with pl.at(level=pl.Level.HOST):
        t = pl.load(x, [0, 0], [4, 4])  # noqa: F841


def test_non_core_group_level_is_refused_as_multi_card():
    with pytest.raises(PyptoError, match="multi-card distribution is not supported"):
        wrong_level(np.ones((4, 4), np.float32))
