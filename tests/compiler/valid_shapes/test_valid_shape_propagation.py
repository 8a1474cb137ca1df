"""Every tile op keeps its operand's valid region, so a tail tile flows through any op to its store.

A tail tile is loaded as a full [16, 32] tile with valid_shapes=[10, 30] from a [10, 30] tensor. Ops
that used to reset the valid region to the full shape (unary ops, reductions, expands, sel, transpose)
made the following store either fail to compile ("valid region [16, 32] exceeds dim 0 of size 10") or,
with a larger output, write the padding as data.
"""

import numpy as np
import pytest
from conftest import dsl_program, needs_emulator

from pypto.runtime import run

pytestmark = needs_emulator

LOAD = "t = pl.load(x, [0, 0], [16, 32], valid_shapes=[10, 30])\n"
TMP = "tmp = pl.create_tile([16, 32], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)\n"
CASES = {
    "exp": ("r = pl.exp(t)", (10, 30), np.exp),
    "neg": ("r = pl.neg(t)", (10, 30), np.negative),
    "abs": ("r = pl.abs(t)", (10, 30), np.abs),
    "relu": ("r = pl.relu(t)", (10, 30), lambda x: np.maximum(x, 0)),
    "sqrt_abs": ("r = pl.sqrt(pl.abs(t))", (10, 30), lambda x: np.sqrt(np.abs(x))),
    "row_sum": (TMP + "r = pl.row_sum(t, tmp)", (10, 1), lambda x: x.sum(1, keepdims=True)),
    "row_max_sub": (TMP + "r = pl.row_expand_sub(t, pl.row_max(t, tmp))", (10, 30), lambda x: x - x.max(1, keepdims=True)),
    "col_max": ("r = pl.max(t, axis=0, keepdim=True)", (1, 30), lambda x: x.max(0, keepdims=True)),
    "sel": ("r = pl.sel(pl.cmps(t, 0.0, cmp_type=pl.CmpType.GT), t, pl.muls(t, 0.5))", (10, 30),
            lambda x: np.where(x > 0, x, x * np.float32(0.5))),
    "sels": ("r = pl.sels(pl.cmps(t, 0.0, cmp_type=pl.CmpType.GT), t, -1.0)", (10, 30),
             lambda x: np.where(x > 0, x, np.float32(-1))),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_tail_tile_through_op_to_store(case):
    body, out_shape, ref = CASES[case]
    x = np.random.default_rng(1).standard_normal((10, 30)).astype(np.float32)
    prog = dsl_program(LOAD + body + "\n", {"x": ((10, 30), "FP32")}, (out_shape, "FP32"))
    r = run(prog, x)
    assert not r.errors(), r.errors()
    np.testing.assert_allclose(r.outputs[0], ref(x), rtol=1e-5, atol=1e-5)


def test_binary_op_of_two_tails_keeps_the_common_region():
    """[16, 32] tiles valid [10, 30] and [12, 32]: the sum is valid where both are, [10, 30]."""
    body = ("a = pl.load(x, [0, 0], [16, 32], valid_shapes=[10, 30])\n"
            "b = pl.load(y, [0, 0], [16, 32], valid_shapes=[12, 32])\n"
            "r = pl.add(b, a)\n")
    x = np.random.default_rng(2).standard_normal((10, 30)).astype(np.float32)
    y = np.random.default_rng(3).standard_normal((12, 32)).astype(np.float32)
    prog = dsl_program(body, {"x": ((10, 30), "FP32"), "y": ((12, 32), "FP32")}, ((10, 30), "FP32"))
    r = run(prog, x, y)
    assert not r.errors(), r.errors()
    np.testing.assert_allclose(r.outputs[0], x + y[:10, :30], rtol=1e-6)
