"""``pl.cast`` of a float scalar to an integer rounds by its mode (spec pypto-jit §8: ``pl.cast(x,
target_type, mode="round")`` works on tensors, tiles and scalars), in kernel code and on the host alike,
and equals the same cast of a tile. Red team 12 found the scalar form truncating (2.5 -> 2, -1.6 -> -1)
under the default mode "round", and refusing every other mode."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pypto.language as pl
from pypto.errors import PyptoTypeError

N = 8
MODES = ("floor", "ceil", "trunc", "round", "rint")


@pl.jit
def scalar_casts_in_a_kernel(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="scalar_modes"):
        for j in pl.range(N):
            v = pl.read(x, [0, j])
            pl.write(y, [0, j], pl.cast(v, pl.INT32, mode="floor"))
            pl.write(y, [1, j], pl.cast(v, pl.INT32, mode="ceil"))
            pl.write(y, [2, j], pl.cast(v, pl.INT32, mode="trunc"))
            pl.write(y, [3, j], pl.cast(v, pl.INT32))
            pl.write(y, [4, j], pl.cast(v, pl.INT32, mode="rint"))


@pl.jit
def scalar_casts_on_the_host(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    for j in pl.range(N):
        v = pl.read(x, [0, j])
        pl.write(y, [0, j], pl.cast(v, pl.INT32, mode=3))
        pl.write(y, [1, j], pl.cast(v, pl.INT32, mode=4))
        pl.write(y, [2, j], pl.cast(v, pl.INT32, mode=5))
        pl.write(y, [3, j], pl.cast(v, pl.INT32, mode=2))
        pl.write(y, [4, j], pl.cast(v, pl.INT32, mode=1))


@pl.jit
def tile_casts(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="tile_modes"):
        t = pl.load(x, [0, 0], [1, N])
        pl.store(pl.cast(t, pl.INT32, mode="floor"), [0, 0], y)
        pl.store(pl.cast(t, pl.INT32, mode="ceil"), [1, 0], y)
        pl.store(pl.cast(t, pl.INT32, mode="trunc"), [2, 0], y)
        pl.store(pl.cast(t, pl.INT32), [3, 0], y)
        pl.store(pl.cast(t, pl.INT32, mode="rint"), [4, 0], y)


@pl.jit
def scalar_cast_odd(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="odd"):
        pl.write(y, [0, 0], pl.cast(pl.read(x, [0, 0]), pl.INT32, mode="odd"))


def _numpy(x: np.ndarray) -> np.ndarray:
    """The five modes written the straightforward way."""
    away = np.sign(x) * np.floor(np.abs(x) + np.float64(0.5))
    return np.stack([np.floor(x), np.ceil(x), np.trunc(x), away, np.rint(x)]).astype(np.int32)


_VALUES = st.one_of(
    st.floats(-1e6, 1e6, width=32),
    st.integers(-2000, 2000).map(lambda k: k / 2),  # ties
    st.sampled_from([0.49999997, -0.49999997, 0.5, -0.5, -0.0, 8388609.0, -8388609.0, 1.5, 2.5]),
)


@settings(derandomize=True, deadline=None, max_examples=12)
@given(st.lists(_VALUES, min_size=N, max_size=N))
def test_scalar_casts_round_by_their_mode_as_numpy_and_the_tile_cast_do(values):
    x = np.array([values], np.float32)
    want = _numpy(x.astype(np.float64)[0])
    for program in (scalar_casts_in_a_kernel, scalar_casts_on_the_host, tile_casts):
        y = np.full((len(MODES), N), -12345, np.int32)
        program(x, y)
        np.testing.assert_array_equal(y, want, err_msg=program.__name__)


def test_round_to_odd_of_a_scalar_to_an_integer_is_refused_at_its_line():
    with pytest.raises(PyptoTypeError, match=r"test_round12_scalar_cast_modes.py:\d+:\d+: .*mode='odd'"):
        scalar_cast_odd(np.zeros((1, N), np.float32), np.zeros((1, 1), np.int32))
