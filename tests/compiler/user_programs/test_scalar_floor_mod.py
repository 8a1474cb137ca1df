"""Python's ``%`` on a negative scalar (int or float) takes the divisor's sign ((0 - 3) % 4 == 1). The PTO code
generator lowered it to arith.remsi, which takes the dividend's (-3), so block 0 was silently left
out (max error 3.9 vs NumPy); ``//`` (floordivsi) was already floored."""

from __future__ import annotations

import numpy as np
import pytest

from pypto.runtime import run

from .helpers import STRATEGIES, prog


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_mod_and_floordiv_of_a_negative_loop_value_follow_python(strategy):
    x = np.random.default_rng(0).standard_normal((96, 32)).astype(np.float32)
    xb = x.reshape(6, 16, 32)
    want = sum(xb[i] for i in range(6) if (i - 3) % 4 == 1) + sum(10 * xb[i] for i in range(6) if (i - 3) // 4 == -1)
    r = run(prog("negative_floor_mod", "NegMod"), x, strategy=strategy)
    assert [f for f in r.findings if f.severity == "error"] == []
    np.testing.assert_allclose(r.outputs[0], want, rtol=1e-5, atol=1e-5)


def test_float_mod_of_a_negative_value_follows_python():
    """remf is C's fmod (fmod(-3.0, 2.5) == -0.5); Python's (-3.0) % 2.5 is 2.0."""
    x = np.random.default_rng(1).standard_normal((96, 32)).astype(np.float32)
    m = np.array([(i - 3.0) % 2.5 for i in range(6)], np.float32)
    r = run(prog("negative_float_mod", "FMod"), x, strategy="Default")
    assert [f for f in r.findings if f.severity == "error"] == []
    np.testing.assert_allclose(r.outputs[0], x * np.repeat(m, 16)[:, None], rtol=1e-6, atol=1e-6)
