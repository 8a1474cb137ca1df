"""Wrong orchestration code faults at the user's line, never with a NumPy traceback nor a silent
wrong number: a view (or slice assignment) whose run-time window runs past the tensor (NumPy cut the
view short, and the kernel then faulted at a line of the generated .pto), pl.read / pl.write of an
element past the end (IndexError) or at a negative index (Python's count from the end); and blocks of
one pl.spmd launch racing on a window name the user's store, not '<string>'."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import RuntimeFault
from pyptoemu import KernelFault


@pl.jit
def exp_of_rows_from(x: pl.Tensor, start: pl.Tensor, z: pl.Out[pl.Tensor]):
    r = pl.cast(pl.read(start, [0]), pl.INDEX)
    v = x[r:r + 8, :]
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="exp_rows"):
        z[:, :] = pl.exp(v)


@pl.jit
def write_rows_at(x: pl.Tensor, start: pl.Tensor, z: pl.Out[pl.Tensor]):
    r = pl.cast(pl.read(start, [0]), pl.INDEX)
    z[r:r + 8, :] = x


@pl.jit
def scale_by_element(x: pl.Tensor, idx: pl.Tensor, y: pl.Out[pl.Tensor]):
    i = pl.cast(pl.read(idx, [0]), pl.INDEX)
    v = pl.read(x, [i, 0])
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="scale"):
        y[:, :] = pl.mul(x, v)


@pl.jit
def overlapping_blocks(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    for b in pl.spmd(4):
        t = pl.load(x, [b * 8, 0], [16, 32])
        pl.store(t, [b * 8, 0], y)


def _line(fn, offset: int) -> str:
    return f"{__file__}:{fn.__wrapped__.__code__.co_firstlineno + offset}:"


def test_view_with_a_run_time_window_past_the_end_is_located():
    x = np.random.default_rng(0).standard_normal((16, 32)).astype(np.float32)
    z = np.zeros((8, 32), np.float32)
    exp_of_rows_from(x, np.array([8], np.int32), z)  # rows 8..15: fits
    np.testing.assert_allclose(z, np.exp(x[8:]), rtol=1e-6)
    with pytest.raises(RuntimeFault, match=r"window \[12, 20\) on axis 0 is outside the tensor's 0..16") as info:
        exp_of_rows_from(x, np.array([12], np.int32), z)
    assert str(info.value).startswith(_line(exp_of_rows_from, 3))


def test_slice_assignment_past_the_end_is_located():
    x = np.ones((8, 32), np.float32)
    z = np.zeros((16, 32), np.float32)
    with pytest.raises(RuntimeFault, match=r"window \[10, 18\) on axis 0") as info:
        write_rows_at(x, np.array([10], np.int32), z)
    assert str(info.value).startswith(_line(write_rows_at, 3))
    assert not z.any()  # nothing was written


@pytest.mark.parametrize("i", [4, 9, -1])
def test_read_of_an_element_outside_the_tensor_is_located(i):
    x = np.arange(16, dtype=np.float32).reshape(4, 4)
    with pytest.raises(RuntimeFault, match=rf"read: index {i} on axis 0 is outside the tensor's 0..4") as info:
        scale_by_element(x, np.array([i], np.int32), np.zeros_like(x))
    assert str(info.value).startswith(_line(scale_by_element, 3))


def test_race_between_spmd_blocks_names_the_users_store():
    x = np.ones((40, 32), np.float32)
    with pytest.raises(KernelFault, match="race") as info:
        overlapping_blocks(x, np.zeros_like(x))
    text = str(info.value)
    assert text.startswith(_line(overlapping_blocks, 4)) and "<string>" not in text
