"""Every example kernel runs on the emulator and matches its NumPy reference."""

from __future__ import annotations

import numpy as np
import pytest

import pyptoemu
from pyptoemu.testing import assert_kernel_matches
from tests.conftest import EXAMPLES, _load_reference

REF = _load_reference()
KERNELS = sorted(REF.INPUTS)


@pytest.mark.parametrize("name", KERNELS)
def test_example_matches_numpy(name):
    inputs = REF.make_inputs(name, seed=1)
    inputs.update(REF.make_outputs(name))
    args = REF.ARGS.get(name, {})
    exp = REF.expected(name, inputs, args)
    rtol, atol = REF.TOLERANCES[name]
    res = assert_kernel_matches(EXAMPLES / name, exp, inputs=inputs, args=args, rtol=rtol, atol=atol)
    for key, want in exp.items():
        assert res.outputs[key].shape == want.shape, (key, res.outputs[key].shape, want.shape)
    assert not res.errors(), [str(f) for f in res.errors()]
    assert res.cycles > 0


def test_matmul_without_bias():
    name = "matmul_splitk.pto"
    inputs = REF.make_inputs(name, seed=2)
    res = pyptoemu.run(EXAMPLES / name, inputs=inputs, args={"arg4": False})
    exp = REF.expected(name, inputs, {"arg4": False})
    np.testing.assert_allclose(res.outputs["arg3"], exp["arg3"], rtol=1e-3, atol=1e-3)
    assert not np.allclose(exp["arg3"], REF.expected(name, inputs, {"arg4": True})["arg3"])


def test_double_buffering_beats_serial():
    """Same work; the ping-pong kernel overlaps MTE2, V and MTE3 and must be clearly faster."""
    db = pyptoemu.run(EXAMPLES / "double_buffer_1024.pto")
    sb = pyptoemu.run(EXAMPLES / "single_buffer_1024.pto")
    assert db.cycles < 0.8 * sb.cycles, (db.cycles, sb.cycles)
    np.testing.assert_array_equal(db.outputs["arg1"], sb.outputs["arg1"])
