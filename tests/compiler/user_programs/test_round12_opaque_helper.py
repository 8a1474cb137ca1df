"""A ``@pl.jit.opaque`` helper (spec pypto-jit §2.1, §2.7: a separate function that may hold its own
orchestration loops and ``pl.at`` regions) called from a ``@pl.jit`` entry: the program then holds two
Orchestration functions, and a call runs the entry. Red team 12 found the call refused ("program ...
has several candidate entries; pass entry=...")."""

from __future__ import annotations

import numpy as np

import pypto.language as pl


@pl.jit.opaque
def scale_halves(x: pl.Tensor, y: pl.Out[pl.Tensor], s: float):
    for h in pl.range(2):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="scale_half"):
            t = pl.load(x, [h * 8, 0], [8, 32])
            pl.store(pl.muls(t, pl.cast(h + 1, pl.FP32) * s), [h * 8, 0], y)
    return y


@pl.jit
def opaque_then_add(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    """y = x * (0.5 on rows 0-7, 1.0 on rows 8-15) + 1: the opaque helper, then a region of the entry."""
    scale_halves(x, y, 0.5)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="plus_one"):
        y[:, :] = pl.adds(y, 1.0)


def test_an_entry_calling_an_opaque_helper_runs_the_entry():
    x = np.random.default_rng(24).standard_normal((16, 32)).astype(np.float32)
    y = np.full_like(x, np.nan)
    opaque_then_add(x, y)
    np.testing.assert_allclose(y, x * np.repeat([0.5, 1.0], 8)[:, None] + 1, rtol=1e-6)
    compiled = opaque_then_add.compile(x, y)
    assert compiled.entry.name == "opaque_then_add"
    assert opaque_then_add.lower(x, y).name == "opaque_then_add"
