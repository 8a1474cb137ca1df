"""Broadcasting follows NumPy for every pair of shapes the compiler accepts; the rest is a compile error.

Every ordered pair of operand shapes from [R, C], [R, 1], [1, C], [1, 1], [C], [1] and [R] (R != C, so
[R] against [R, C] is not a NumPy broadcast) is compiled at the tensor level (an InCore kernel of
tensor ops, tiled by the compiler) and at the tile level (pl.load + a binary tile op + pl.store). Each
run must either match NumPy exactly (one rounding of one op) or fail to compile with a located error;
a kernel fault or a wrong number is a bug. The red-team cases were `[R, 1] - [R, C]` (rejected) and
`[R, C] + [C]` (compiled, then faulted in tadd).
"""

import itertools

import numpy as np
import pytest
from conftest import dsl_program, needs_emulator

from pypto.errors import PyptoError
from pypto.runtime import run

pytestmark = needs_emulator

R, C = 8, 16
SHAPES = [(R, C), (R, 1), (1, C), (1, 1), (C,), (1,), (R,)]
OPS = {"add": np.add, "sub": np.subtract, "div": np.divide, "maximum": np.maximum}
PAIRS = list(itertools.product(SHAPES, SHAPES))


def _ty(shape):
    return f"pl.Tensor[[{', '.join(map(str, shape))}], pl.FP32]"


def tensor_program(op, sa, sb, out):
    import hashlib
    import os
    import tempfile

    from conftest import load_module

    src = (
        "import pypto.language as pl\n\n\n@pl.program\nclass P:\n"
        "    @pl.function(type=pl.FunctionType.InCore)\n"
        f"    def k(self, a: {_ty(sa)}, b: {_ty(sb)}) -> {_ty(out)}:\n"
        f"        r = pl.{op}(a, b)\n"
        "        return r\n\n"
        "    @pl.function(type=pl.FunctionType.Orchestration)\n"
        f"    def main(self, a: {_ty(sa)}, b: {_ty(sb)}) -> {_ty(out)}:\n"
        "        r = self.k(a, b)\n"
        "        return r\n"
    )
    d = os.path.join(tempfile.gettempdir(), "pypto_bcast_pairs")
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "t_" + hashlib.sha1(src.encode()).hexdigest()[:16] + ".py")
    with open(path, "w") as f:
        f.write(src)
    return load_module(path).P


def tile_program(op, sa, sb, out):
    def load(name, shape):
        zeros = ", ".join("0" for _ in shape)
        return f"t{name} = pl.load({name}, [{zeros}], [{', '.join(map(str, shape))}])\n"

    body = load("a", sa) + load("b", sb) + f"r = pl.{op}(ta, tb)\n"
    return dsl_program(body, {"a": (sa, "FP32"), "b": (sb, "FP32")}, (out, "FP32"))


def _inputs(sa, sb):
    rng = np.random.default_rng(len(sa) * 10 + len(sb))
    a = rng.standard_normal(sa).astype(np.float32)
    b = (np.abs(rng.standard_normal(sb)) + np.float32(0.5)).astype(np.float32)  # divisor away from 0
    return a, b


def check_pair(level, op, sa, sb):
    a, b = _inputs(sa, sb)
    try:
        want = OPS[op](a, b)
    except ValueError:
        want = None
    out = want.shape if want is not None else max(sa, sb, key=len)
    build = tensor_program if level == "tensor" else tile_program
    try:
        prog = build(op, sa, sb, out)
        r = run(prog, a, b)
    except PyptoError as e:
        # rejected at compile time: fine, as long as it says where (the op's line) and NumPy agrees or
        # the form is one the tile lowering does not cover
        assert e.span is not None and e.span.is_known(), e
        assert "pl." + op in e.render() or "r = " in e.render(), e.render()
        return "rejected"
    assert want is not None, f"{sa} {op} {sb} is not a NumPy broadcast but compiled and ran"
    assert not r.errors(), r.errors()
    np.testing.assert_array_equal(r.outputs[0], want.astype(np.float32))
    return "ran"


@pytest.mark.parametrize("level", ["tensor", "tile"])
def test_every_shape_pair(level):
    """All 49 ordered pairs; the op rotates through add/sub/div/maximum so each pair meets one op."""
    ops = sorted(OPS)
    outcomes = {}
    for i, (sa, sb) in enumerate(PAIRS):
        op = ops[i % len(ops)]
        outcomes[(sa, sb, op)] = check_pair(level, op, sa, sb)
    ran = [k for k, v in outcomes.items() if v == "ran"]
    # every NumPy broadcast with a 2-D result runs (those are the ones the expand ops cover)
    two_d = [k for k in outcomes if len(np.broadcast_shapes(*_safe(k[0], k[1]))) == 2]
    assert set(two_d) <= set(ran), sorted(set(two_d) - set(ran))


def _safe(sa, sb):
    try:
        np.broadcast_shapes(sa, sb)
        return sa, sb
    except ValueError:
        return (1, 2, 3), ()  # a 3-D stand-in: not counted as a 2-D broadcast


@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("level", ["tensor", "tile"])
def test_red_team_forms(level, op):
    """[R, 1] op [R, C] (was rejected for sub/div) and [R, C] op [C] (compiled, then faulted)."""
    assert check_pair(level, op, (R, 1), (R, C)) == "ran"
    assert check_pair(level, op, (R, C), (C,)) == "ran"


def test_non_lowerable_broadcast_is_a_located_error():
    """and/or/shl have no broadcasting lowering: rejected at the op, not run past a short operand."""
    body = "ta = pl.load(a, [0, 0], [8, 16])\ntb = pl.load(b, [0, 0], [1, 16])\nr = pl.and_(ta, tb)\n"
    with pytest.raises(PyptoError, match=r"'and' does not broadcast on tiles") as e:
        dsl_program(body, {"a": ((8, 16), "INT32"), "b": ((1, 16), "INT32")}, ((8, 16), "INT32"))
    assert "r = pl.and_(ta, tb)" in e.value.render()


def test_large_tensor_with_column_vectors_is_tiled():
    """A [221, 94] chain with [1, C], [C] and [R, 1] operands: too big for one Vec tile, so the
    compiler tiles it; every block reads its column window of the vectors (was: Vec overflow)."""
    rows, cols = 221, 94
    t = f"pl.Tensor[[{rows}, {cols}], pl.FP32]"
    src = (
        "import pypto.language as pl\n\n\n@pl.program\nclass P:\n"
        "    @pl.function(type=pl.FunctionType.InCore)\n"
        f"    def k(self, a: {t}, c: pl.Tensor[[1, {cols}], pl.FP32], v: pl.Tensor[[{cols}], pl.FP32], "
        f"r: pl.Tensor[[{rows}, 1], pl.FP32]) -> {t}:\n"
        "        x = pl.div(a, c)\n        x = pl.sub(v, x)\n        x = pl.maximum(r, x)\n        x = pl.exp(x)\n"
        "        return x\n"
    )
    import hashlib
    import os
    import tempfile

    from conftest import load_module

    path = os.path.join(tempfile.gettempdir(), "bcast_big_" + hashlib.sha1(src.encode()).hexdigest()[:12] + ".py")
    with open(path, "w") as f:
        f.write(src)
    rng = np.random.default_rng(5)
    a = rng.standard_normal((rows, cols)).astype(np.float32)
    c = (rng.uniform(0.5, 1.5, (1, cols)) * rng.choice([-1, 1], (1, cols))).astype(np.float32)
    v = rng.standard_normal(cols).astype(np.float32)
    r = rng.standard_normal((rows, 1)).astype(np.float32)
    res = run(load_module(path).P, a, c, v, r)
    assert not res.errors(), res.errors()
    want = np.exp(np.maximum(r, v - a / c))
    np.testing.assert_allclose(res.outputs[0], want, rtol=1e-5)
