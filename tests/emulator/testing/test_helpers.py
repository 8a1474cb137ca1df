"""``pyptoemu.testing``: assert_kernel_matches, the strategies and the ``emulator`` fixture, used the
way the README shows a user doing it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings

from ptoisa.dtypes import itemsize, np_dtype
from pyptoemu import KernelFault
from pyptoemu.testing import assert_kernel_matches
from pyptoemu.testing.strategies import arrays, tiles

ROOT = Path(__file__).resolve().parents[3]
VADD = ROOT / "examples" / "vadd_32x32.pto"


# The README's property test, verbatim apart from the path and the example budget.
@settings(max_examples=8)
@given(x=arrays("f32", (32, 32)), y=arrays("f32", (32, 32)))
def test_readme_property_test(x, y):
    assert_kernel_matches(VADD, lambda a, b: a + b, inputs={"arg0": x, "arg1": y})


def test_mismatch_names_the_worst_elements():
    x = np.ones((32, 32), np.float32)
    wrong = x + x
    wrong[5, 6] = 9.0
    with pytest.raises(AssertionError) as info:
        assert_kernel_matches(VADD, {"arg2": wrong}, inputs={"arg0": x, "arg1": x})
    text = str(info.value)
    assert "1 of 1024 elements differ beyond rtol=1e-05" in text and "arg2[5, 6]: got 2, want 9" in text


def test_reference_shapes_and_faults():
    x = np.ones((32, 32), np.float32)
    with pytest.raises(AssertionError, match="returned 2 array"):
        assert_kernel_matches(VADD, lambda a, b: (a, b), inputs={"arg0": x, "arg1": x})
    with pytest.raises(KernelFault):  # a racy kernel fails loudly, not by comparison luck
        assert_kernel_matches(ROOT / "examples" / "vadd_race.pto", lambda a, b: a + b,
                              inputs={"arg0": x, "arg1": x})


@given(tile=tiles("f16"))
def test_tile_strategy_respects_the_row_unit(tile):
    rows, cols, vrow, vcol = tile
    assert (cols * itemsize("f16")) % 32 == 0 and 1 <= vrow <= rows and 1 <= vcol <= cols


@given(a=arrays("bf16", (4, 16), lo=-2, hi=2))
def test_array_strategy_gives_the_dtype_in_range(a):
    assert a.dtype == np_dtype("bf16") and np.all(np.abs(a.astype(np.float32)) <= 2)


def test_emulator_fixture_keeps_a_trace_per_run(emulator, tmp_path):
    x = np.full((32, 32), 1.5, np.float32)
    res = emulator.assert_matches(VADD, lambda a, b: a + b, inputs={"arg0": x, "arg1": x})
    assert Path(res.trace) == tmp_path / "vadd_32x32_1.json" and Path(res.trace).exists()
    assert emulator.run(VADD).trace.endswith("vadd_32x32_2.json")
