"""Both back ends emit instructions only in the forms the ISA takes (pto-text-format §4.3, §4.6, §4.7).

An elementwise tile-tile instruction takes ND tiles whose valid regions are the destination's; a row
reduction or expand needs the source's valid rows in its destination, a column one its columns. The IR
keeps ``[R, 1]`` column vectors (DN) and tail tiles with different valid regions, so the code
generators read and write such operands through aliases (``pypto.codegen.legal_forms``, one decision
for both). The C++ is read precisely (``cpp_forms``: every tile's declared type and current valid
extents at each instruction) and the ``.pto`` of the same program is run against NumPy.
"""

import os
import sys

import numpy as np
import pytest
from conftest import HERE, dsl_program, needs_emulator
from cpp_forms import illegal_forms

from pypto.errors import PyptoError
from pypto.ir.compiler import compile_program
from pypto.ir.stmt import Program
from pypto.runtime import run

PROGS = os.path.join(HERE, "user_programs", "progs")

# Column vectors of two different tails (valid rows 10 and 16) added, and two tiles with different
# ragged tails (10 x 32 and 16 x 30) added: the result is valid where both are (10 x 30).
TAILS = """
t = pl.load(x, [0, 0], [16, 32], valid_shapes=[10, 32])
u = pl.load(y, [0, 0], [16, 32], valid_shapes=[16, 30])
tmp = pl.create_tile([16, 32], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)
s = pl.row_sum(t, tmp)
m = pl.row_max(u, tmp)
v = pl.add(s, m)
w = pl.add(t, u)
r = pl.row_expand_add(w, v)
"""


def _tails():
    return dsl_program(TAILS, {"x": ((10, 32), "FP32"), "y": ((16, 30), "FP32")}, ((16, 32), "FP32"))


def _lines(text: str) -> list[str]:
    return [ln.strip() for ln in text.splitlines()]


def test_column_vectors_and_tails_are_aliased_in_cpp():
    text = compile_program(_tails()).cpp["k"]
    assert illegal_forms(text) == []
    lines = _lines(text)
    # the [16, 1] DN vectors are added as their [1, 16] ND views, each valid 1 x 10 (dst's region)
    add = next(ln for ln in lines if ln.startswith("TADD(v"))
    dst, a, b = add[len("TADD("):-2].split(", ")
    for name, src in ((dst, "v"), (a, "s"), (b, "m")):
        i = lines.index(f"TRESHAPE({name}, {src});")
        assert lines[i - 2] == (f"using {name}Type = Tile<TileType::Vec, float, 1, 16, BLayout::RowMajor, -1, -1, "
                                "SLayout::NoneBox, 512>;")
        assert lines[i - 1] == f"{name}Type {name}(1, 10);"
    # the 10 x 32 and 16 x 30 tails are read as 10 x 30 (w's region), w written as it is
    add = next(ln for ln in lines if ln.startswith("TADD(w"))
    _, a, b = add[len("TADD("):-2].split(", ")
    assert lines[lines.index(f"TRESHAPE({a}, t);") - 1] == f"{a}Type {a}(10, 30);"
    assert lines[lines.index(f"TRESHAPE({b}, u);") - 1] == f"{b}Type {b}(10, 30);"


def test_the_checker_sees_the_forms_the_cpp_used_to_have():
    """The C++ the backend wrote before (operands as the IR has them) is reported, precisely."""
    old = """
    using sType = Tile<TileType::Vec, float, 16, 1, BLayout::ColMajor, -1, -1, SLayout::NoneBox, 512>;
    sType s(10, 1);
    using mType = Tile<TileType::Vec, float, 16, 1, BLayout::ColMajor, -1, -1, SLayout::NoneBox, 512>;
    mType m(16, 1);
    using vType = Tile<TileType::Vec, float, 16, 1, BLayout::ColMajor, -1, -1, SLayout::NoneBox, 512>;
    vType v(10, 1);
    using dType = Tile<TileType::Vec, float, 8, 16, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512>;
    dType d(8, 16);
    using cType = Tile<TileType::Vec, float, 1, 16, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512>;
    cType c(1, 1);
    TADD(v, s, m);
    TCOLEXPAND(d, c);
    d = dType(n, 16);
    TROWSUM(v, d, d);
    """
    found = illegal_forms(old)
    assert sum("column vector" in f for f in found) == 3
    assert [f for f in found if "valid (" in f] == ["TADD(v, s, m);: m valid ('16', '1') != dst ('10', '1')"]
    assert "TCOLEXPAND(d, c);: valid cols 1 != dst's 16" in found
    assert "TROWSUM(v, d, d);: valid rows n != dst's 10" in found


@needs_emulator
def test_the_pto_of_the_same_program_runs_right():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((10, 32)).astype(np.float32)
    y = rng.standard_normal((16, 30)).astype(np.float32)
    r = run(_tails(), x, y)
    assert not r.errors(), r.errors()
    got = r.outputs[0]
    want = x[:, :30] + y[:10] + (x.sum(1) + y[:10].max(1))[:, None]
    np.testing.assert_allclose(got[:10, :30], want, rtol=1e-5, atol=1e-5)


RUNTIME_TAIL = """
t = pl.load(x, [0, 0], [16, 32], valid_shapes=[n, 32])
u = pl.load(x, [0, 0], [16, 32])
tmp = pl.create_tile([16, 32], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)
s = pl.row_sum(t, tmp)
m = pl.row_max(u, tmp)
v = pl.mul(s, m)
r = pl.row_expand_mul(t, v)
"""


def _runtime_tail_program():
    src = ("import pypto.language as pl\n\n@pl.program\nclass P:\n"
           "    @pl.function(type=pl.FunctionType.InCore)\n"
           "    def k(self, x: pl.Tensor[[16, 32], pl.FP32], n: pl.Scalar[pl.INDEX],\n"
           "          o: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:\n"
           + "".join(f"        {ln}\n" for ln in RUNTIME_TAIL.strip().splitlines())
           + "        return pl.store(r, [0, 0], o)\n")
    import importlib.util
    import tempfile

    path = os.path.join(tempfile.mkdtemp(prefix="pypto_forms_"), "runtime_tail.py")
    with open(path, "w") as f:
        f.write(src)
    spec = importlib.util.spec_from_file_location("pypto_forms_runtime_tail", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.P


def test_a_run_time_tail_is_aliased_with_its_run_time_extent():
    compiled = compile_program(_runtime_tail_program())
    text = compiled.cpp["k"]
    assert illegal_forms(text) == []
    lines = _lines(text)
    mul = next(ln for ln in lines if ln.startswith("TMUL("))
    dst, a, b = mul[len("TMUL("):-2].split(", ")
    assert lines[lines.index(f"TRESHAPE({a}, s);") - 1] == f"{a}Type {a}(1, n);"
    assert lines[lines.index(f"TRESHAPE({b}, m);") - 1] == f"{b}Type {b}(1, n);"  # m (16 rows) read as 1 x n
    assert lines[lines.index(f"TRESHAPE({dst}, v);") - 1] == f"{dst}Type {dst}(1, n);"
    # the .pto says the same: a ?x? alias whose valid region set_validshape sets to 1 x n
    assert "pto.set_validshape" in compiled.pto["k"]


@needs_emulator
@pytest.mark.parametrize("n", [16, 5])
def test_a_run_time_tail_runs_right(n):
    x = np.random.default_rng(n).standard_normal((16, 32)).astype(np.float32)
    r = run(_runtime_tail_program(), x, n)
    assert not r.errors(), r.errors()
    v = x[:n].sum(1) * x[:n].max(1)
    np.testing.assert_allclose(r.outputs[0][:n], x[:n] * v[:, None], rtol=1e-5, atol=1e-5)


def _programs():
    import glob

    sys.path.insert(0, PROGS)
    try:
        for path in sorted(glob.glob(os.path.join(PROGS, "*.py"))):
            mod = __import__(os.path.basename(path)[:-3])
            for name, v in sorted(vars(mod).items()):
                if isinstance(v, Program):
                    yield f"{mod.__name__}.{name}", v
    finally:
        sys.path.remove(PROGS)


def test_no_user_program_has_an_illegal_form_in_cpp():
    checked = 0
    for name, prog in _programs():
        try:
            comp = compile_program(prog)
        except PyptoError:  # programs meant to be rejected are tested elsewhere
            continue
        for kernel, text in comp.cpp.items():
            assert illegal_forms(text) == [], f"{name}.{kernel}"
            checked += 1
    assert checked >= 30


def test_library_composites_at_ragged_shapes_have_legal_cpp():
    """softmax / layer_norm over ragged row blocks (column vectors of row statistics, tails), and
    tensor-level broadcasting ops of every vector kind: no illegal form in the C++."""
    sys.path.insert(0, os.path.join(HERE, "lib"))
    try:
        from lib_programs import program
    finally:
        sys.path.remove(os.path.join(HERE, "lib"))
    from pypto import DataType
    from pypto.lib import ops as L
    from pypto.ops import tensor as T

    f32 = DataType.FP32
    cases = [
        (lambda a: L.softmax(a), [("x", (37, 130), f32)]),
        (lambda a, w, b: L.layer_norm(a, w, b), [("x", (300, 1030), f32), ("w", (1030,), f32), ("b", (1030,), f32)]),
        (lambda a, v: T.sub(v, a), [("x", (45, 70), f32), ("v", (45, 1), f32)]),
        (lambda a, v: T.add(a, v), [("x", (45, 70), f32), ("v", (1, 1), f32)]),
        (lambda a, v: T.div(a, v), [("x", (45, 70), f32), ("v", (1, 70), f32)]),
    ]
    for build, params in cases:
        comp = compile_program(program(build, params))
        for kernel, text in comp.cpp.items():
            assert illegal_forms(text) == [], (kernel, params)
