"""``pl.create_tensor(..., manual_dep=True)`` (spec pypto-jit §9): no dependency is inferred through the
tensor, so two tasks that share it need a declared ``deps=`` edge even outside a manual scope; without
one the race is reported at the later task's line, with one the program runs in dependency order."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import PyptoError


@pl.jit
def ordered(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    t = pl.create_tensor([16, 16], dtype=pl.FP32, manual_dep=True)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="produce") as tid:
        t[:, :] = pl.muls(x[:, :], 2.0)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="consume", deps=[tid]):
        y[:, :] = pl.adds(t[:, :], 1.0)


@pl.jit
def unordered(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    t = pl.create_tensor([16, 16], dtype=pl.FP32, manual_dep=True)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="produce"):
        t[:, :] = pl.muls(x[:, :], 2.0)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="consume"):
        y[:, :] = pl.adds(t[:, :], 1.0)


@pl.jit
def inferred(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    t = pl.create_tensor([16, 16], dtype=pl.FP32)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="produce"):
        t[:, :] = pl.muls(x[:, :], 2.0)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="consume"):
        y[:, :] = pl.adds(t[:, :], 1.0)


def _x() -> np.ndarray:
    return np.random.default_rng(51).standard_normal((16, 16)).astype(np.float32)


@pytest.mark.parametrize("kernel", [ordered, inferred])
def test_declared_or_inferred_edges_run_producer_first(kernel):
    x = _x()
    y = np.zeros_like(x)
    kernel(x, y)
    np.testing.assert_allclose(y, 2 * x + 1, rtol=1e-6)


def test_manual_dep_tensor_without_a_declared_edge_is_a_race_at_the_line():
    x = _x()
    line = unordered.__wrapped__.__code__.co_firstlineno + 5
    with pytest.raises(PyptoError, match=rf"test_jit_manual_dep.py:{line}:\d+: .*race: task 'consume' and task "
                       r"'produce'.*tensor 't'.*manual_dep=True"):
        unordered(x, np.zeros_like(x))
