"""Aliases (``z = y``) and names reused across branches compile and compute what Python would.

Red-team cases: ``z = y; return z`` in a tensor-level kernel failed verification ("'y' is used before
it is defined": the conversion to tiles dropped ``y``'s definition but kept the alias), and a tile
name assigned in two nested else-branches. Each program here runs on the emulator and is compared
with NumPy for every branch taken.
"""

import numpy as np
import pytest
from conftest import load_module, needs_emulator

from pypto.runtime import run

pytestmark = needs_emulator
X = np.random.default_rng(0).standard_normal((16, 32)).astype(np.float32)
TENSOR = "pl.Tensor[[16, 32], pl.FP32]"


def program(tmp_path, body: str, params: str, ret: str):
    src = ("import pypto.language as pl\n\n\n@pl.program\nclass P:\n"
           "    @pl.function(type=pl.FunctionType.InCore)\n"
           f"    def k(self, {params}) -> {ret}:\n" + body)
    path = tmp_path / f"prog_{abs(hash(src))}.py"
    path.write_text(src)
    return load_module(str(path)).P


ALIASES = {
    "return_alias": ("        y = pl.add(x, 1.0)\n        z = y\n        return z\n", (X + 1,)),
    "alias_chain": ("        y = pl.add(x, 1.0)\n        z = y\n        z2 = z\n        return z2\n", (X + 1,)),
    "alias_then_op": ("        y = pl.add(x, 1.0)\n        z = y\n        w = pl.mul(z, 2.0)\n        return w\n",
                      ((X + 1) * 2,)),
    "both_names": ("        y = pl.add(x, 1.0)\n        z = y\n        return y, z\n", (X + 1, X + 1)),
}


@pytest.mark.parametrize("case", sorted(ALIASES))
def test_tensor_kernel_alias(tmp_path, case):
    body, want = ALIASES[case]
    ret = TENSOR if len(want) == 1 else f"tuple[{TENSOR}, {TENSOR}]"
    r = run(program(tmp_path, body, f"x: {TENSOR}", ret), X)
    assert not r.errors(), r.errors()
    assert len(r.outputs) == len(want)
    for got, w in zip(r.outputs, want, strict=True):
        np.testing.assert_array_equal(got, w)


def test_tile_kernel_alias(tmp_path):
    body = ("        t = pl.load(x, [0, 0], [16, 32])\n        u = t\n        v = pl.add(u, t)\n        w = v\n"
            "        return pl.store(w, [0, 0], o)\n")
    r = run(program(tmp_path, body, f"x: {TENSOR}, o: pl.Out[{TENSOR}]", TENSOR), X)
    np.testing.assert_array_equal(r.outputs[0], X + X)


SELF_UPDATE = """        t = pl.load(x, [0, 0], [16, 32])
        if n < 1:
            t = pl.add(t, 1.0)
        else:
            if n < 2:
                t = pl.mul(t, 2.0)
            else:
                if n < 3:
                    t = pl.sub(t, 3.0)
                else:
                    t = pl.maximum(t, pl.muls(t, -1.0))
        return pl.store(t, [0, 0], o)
"""
NESTED = """        t = pl.load(x, [0, 0], [16, 32])
        if n < 1:
            u = pl.add(t, 1.0)
        else:
            if n < 2:
                u = pl.mul(t, 2.0)
            else:
                if n < 3:
                    u = pl.sub(t, 3.0)
                else:
                    u = pl.maximum(t, pl.muls(t, -1.0))
        return pl.store(u, [0, 0], o)
"""
ELIF = """        t = pl.load(x, [0, 0], [16, 32])
        u = pl.adds(t, 0.0)
        if n < 1:
            u = pl.add(t, 1.0)
        elif n < 2:
            u = pl.mul(t, 2.0)
        elif n < 3:
            u = pl.sub(t, 3.0)
        return pl.store(u, [0, 0], o)
"""
REUSED_IN_LOOP = """        t = pl.load(x, [0, 0], [16, 32])
        for i in pl.range(0, 2):
            if n < 1:
                u = pl.add(t, 1.0)
            else:
                if n < 2:
                    u = pl.mul(t, 2.0)
                else:
                    u = pl.sub(t, 3.0)
            t = u
        return pl.store(t, [0, 0], o)
"""


def _step(x, n):
    return x + 1 if n < 1 else x * 2 if n < 2 else x - 3 if n < 3 else np.maximum(x, -x)


@pytest.mark.parametrize("form", ["self_update", "nested", "elif", "in_loop"])
def test_name_assigned_in_nested_else_branches(tmp_path, form):
    """``self_update`` was silently wrong: the parser let the else-branch read the then-branch's ``t``
    (so ``n = 1`` computed ``(t + 1) * 2`` from an input the branch never ran)."""
    body = {"self_update": SELF_UPDATE, "nested": NESTED, "elif": ELIF, "in_loop": REUSED_IN_LOOP}[form]
    prog = program(tmp_path, body, f"x: {TENSOR}, n: pl.Scalar[pl.INDEX], o: pl.Out[{TENSOR}]", TENSOR)
    for n in range(5):
        r = run(prog, X, n)
        assert not r.errors(), r.errors()
        if form in ("nested", "self_update"):
            want = _step(X, n)
        elif form == "elif":
            want = _step(X, n) if n < 3 else X
        else:
            want = _step(_step(X, n), n) if n < 3 else X - 3 - 3
        np.testing.assert_array_equal(r.outputs[0], want, err_msg=f"n = {n}")
