"""The pto-isa C++ backend honours valid shapes and pad values, and lowers compare/select as the .pto does.

No C++ toolchain runs here, so the generated text is asserted precisely. Why each text is right, per
pto-isa's conventions (as its own tile library uses them):

* ``Tile<..., R, C, BLayout, -1, -1, ...> t(VR, VC)``: the ``-1, -1`` template arguments make the valid
  extent a run-time property set by the constructor, and every instruction (TLOAD, TADD, TROWSUM,
  TSTORE ...) iterates over ``GetValidRow() x GetValidCol()``. Constructing a tail tile with its full
  shape (what the backend used to do) makes TSTORE write the padding rows into GM. A valid extent known
  only at run time is set where the tile is defined: ``t = tType(valid, 64); TASSIGN(t, addr);``.
* TLOAD/TSTORE take the GM extent from the ``GlobalTensor``'s ``Shape``, which must equal the tile's
  valid shape, so a tail access gets its own global (``xGlobal_8x32``), and a run-time extent is
  passed to the global's constructor (``Shape<1, 1, 1, -1, 64>`` with ``{valid}``).
* The tenth template argument is the pad value (``PadValue::Zero``/``Max``/``Min``); TFILLPAD and a
  TLOAD of a partial tile fill outside the valid region with it, so a ``fillpad(..., "min")`` tile must
  say ``PadValue::Min`` and a zero-filled matmul operand ``PadValue::Zero``.
* Compare/select: ``TCMP(mask, a, b, CmpMode::LE)`` packs ``a <= b`` into the uint8 mask and
  ``TSEL(dst, mask, src0, src1, tmp)`` takes ``src0`` where the bit is set, ``src1`` elsewhere (the
  library's ``TSEL(result, cmpMask, oneTile, zeroTile, tmp)`` turns a compare into 1/0 that way), which
  is ``np.where(a <= b, a, b)``: the same operands in the same order as ``pto.tsel ins(%m, %a, %b, %tmp)``.
  The mode is spelled by name (``CmpMode::GE``): the language's integer codes (EQ 0, NE 1, LT 2, LE 3,
  GT 4, GE 5) are not a contract with pto-isa's enum, so a cast of the code could pick another compare.
  The scalar forms take the tile's element type (``TCMPS(m, t, static_cast<half>(0.5f), ...)``): a bare
  ``0.5`` is a C++ ``double`` and would make ``T`` deduce to double for a half tile.
"""

import os
import re
import sys

import pytest
from conftest import HERE, dsl_program

from pypto.enums import CmpType
from pypto.errors import PyptoError
from pypto.ir.compiler import compile_program
from pypto.ir.stmt import Program

PROGS = os.path.join(HERE, "user_programs", "progs")


def _prog(module: str, name: str):
    sys.path.insert(0, PROGS)
    try:
        mod = __import__(module)
    finally:
        sys.path.remove(PROGS)
    return getattr(mod, name)


def cpp_of(prog, kernel: str) -> str:
    return compile_program(prog).cpp[kernel]


def test_tail_tiles_and_their_windows():
    text = cpp_of(_prog("valid_tail", "KeywordsValid"), "k")
    assert "tType t(16, 32);" in text  # a full block
    assert "tailType tail(8, 32);" in text  # the [16, 32] tail tile, valid [8, 32]
    assert "tuType tu(8, 32);" in text  # ... and the ops' results keep that valid region
    assert "using xGlobal_8x32ShapeDim5 = Shape<1, 1, 1, 8, 32>;" in text
    assert re.search(r"TASSIGN\(xGlobal_8x32, x \+ \(0 \+ 32 \* [^;]+\);\n\s*TLOAD\(tail, xGlobal_8x32\);", text)
    assert re.search(r"TASSIGN\(yGlobal_8x32, [^;]+;\n\s*TSTORE\(yGlobal_8x32, tu\);", text)
    assert "TLOAD(t, xGlobal);" in text and "using xGlobalShapeDim5 = Shape<1, 1, 1, 16, 32>;" in text


def test_run_time_valid_extent():
    text = cpp_of(_prog("dynamic_rows", "DynamicTail"), "plus1")
    assert "using xGlobalShapeDim5 = Shape<1, 1, 1, -1, 64>;" in text
    want = [
        "t = tType(valid, 64);",
        "TASSIGN(t, 0x0);",
        ("xGlobal = xGlobalType(x + (0 + r * compute_stride(x_tensor, 0) + 0 * compute_stride(x_tensor, 1)), "
         "{valid}, {compute_stride(x_tensor, 0), compute_stride(x_tensor, 1)});"),
        "TLOAD(t, xGlobal);",
    ]
    body = [ln.strip() for ln in text.splitlines()]
    i = body.index(want[0])
    assert body[i : i + 4] == want
    assert "u = uType(valid, 64);" in body


def test_pad_values_reach_the_tile_type():
    body = ('t = pl.load(x, [0, 0], [16, 64], valid_shapes=[16, 50])\n'
            'r = pl.fillpad(t, "min")\n')
    text = cpp_of(dsl_program(body, {"x": ((16, 50), "FP32")}, ((16, 64), "FP32")), "k")
    assert "using rType = Tile<TileType::Vec, float, 16, 64, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, " \
           "PadValue::Min>;" in text
    assert "tType t(16, 50);" in text and "rType r(16, 64);" in text
    assert "TFILLPAD(r, t);" in text


def test_ragged_matmul_operands():
    """Tensor-level 100x130 @ 130x70: operands in whole fractal boxes, zero-padded, true extents valid."""
    from pypto import DataType, ir
    from pypto.ir import IRBuilder
    from pypto.ir.op import tensor

    ib = IRBuilder()
    with ib.program("MM") as p, ib.function("mm", type=ir.FunctionType.InCore) as f:
        a = f.param("a", ir.TensorType([100, 130], DataType.FP16))
        b = f.param("b", ir.TensorType([130, 70], DataType.FP16))
        f.return_type(ir.TensorType([100, 70], DataType.FP32))
        ib.return_stmt(ib.let("c", tensor.matmul(a, b, out_dtype=DataType.FP32)))
    text = cpp_of(p.get_result(), "mm")
    assert re.search(r"Tile<TileType::Mat, half, 112, 144, BLayout::ColMajor, -1, -1, SLayout::RowMajor, 512, "
                     r"PadValue::Zero>;\n\s*\w+ a_mat\w*\(100, 130\);", text), text
    assert re.search(r"Tile<TileType::Left, half, 112, 144,[^>]+>;\n\s*\w+ \w+\(100, 130\);", text)
    assert re.search(r"Tile<TileType::Right, half, 144, 80,[^>]+>;\n\s*\w+ \w+\(130, 70\);", text)
    assert re.search(r"Tile<TileType::Acc, float, 112, 80,[^>]+>;\n\s*\w+ \w+\(100, 70\);", text)
    assert "Shape<1, 1, 1, 100, 130>" in text and "Shape<1, 1, 1, 100, 70>" in text


CMP = """
ta = pl.load(a, [0, 0], [16, 64])
tb = pl.load(b, [0, 0], [16, 64])
m = pl.cmp(ta, tb, cmp_type=pl.CmpType.{mode})
r = pl.sel(m, ta, tb)
"""


@pytest.mark.parametrize("mode", [m.name for m in CmpType])
def test_cmp_sel_text(mode):
    prog = dsl_program(CMP.format(mode=mode), {"a": ((16, 64), "FP32"), "b": ((16, 64), "FP32")},
                       ((16, 64), "FP32"))
    text = cpp_of(prog, "k")
    lines = [ln.strip() for ln in text.splitlines()]
    cmp = lines.index(f"TCMP(m, ta, tb, CmpMode::{mode});")
    sel = next(i for i, ln in enumerate(lines) if ln.startswith("TSEL("))
    assert cmp < sel and lines[sel] == "TSEL(r, m, ta, tb, r_tmp1);", lines[sel]
    assert "mType m(16, 32);" in lines  # one packed row (64 bits, padded to 32 bytes) per data row


def test_scalar_compare_and_select_take_the_tile_type():
    body = ("t = pl.load(x, [0, 0], [16, 32])\n"
            "m = pl.cmps(t, 0.5, cmp_type=pl.CmpType.GE)\n"
            "r = pl.sels(m, t, -2.0)\n")
    text = cpp_of(dsl_program(body, {"x": ((16, 32), "FP16")}, ((16, 32), "FP16")), "k")
    assert "TCMPS(m, t, static_cast<half>(0.5f), CmpMode::GE);" in text
    assert "TSELS(r, m, t, r_tmp1, static_cast<half>(-2.0f));" in text


# ----------------------------------------------------------------------------- both backends agree

_PTO_TILE = re.compile(r"rows=(\d+), cols=(\d+), v_row=(\?|\d+), v_col=(\?|\d+)")
_CPP_TYPE = re.compile(r"using (\w+)Type = Tile<TileType::\w+, [\w:]+, (\d+), (\d+),")
_CPP_DECL = re.compile(r"^\s*(\w+)Type (\w+)\(([^,]+), ([^)]+)\);", re.MULTILINE)
_CPP_RESET = re.compile(r"^\s*(\w+) = (\w+)Type\(([^,]+), ([^)]+)\);", re.MULTILINE)


def _cpp_tiles(text: str) -> set:
    """(rows, cols, valid rows, valid cols) of every C++ tile; a run-time extent counts as '?'.

    A tile with a run-time extent is declared with a placeholder and rebuilt where it is defined
    (``t = tType(valid, 64);``): the rebuilt extents are the ones that count."""
    types = {m.group(1): (m.group(2), m.group(3)) for m in _CPP_TYPE.finditer(text)}
    extents = {m.group(2): (m.group(3), m.group(4)) for m in _CPP_DECL.finditer(text)}
    extents.update({m.group(1): (m.group(3), m.group(4)) for m in _CPP_RESET.finditer(text)})
    out = set()
    for m in _CPP_DECL.finditer(text):
        rows, cols = types[m.group(1)]
        vr, vc = extents[m.group(2)]
        out.add((rows, cols, vr if vr.isdigit() else "?", vc if vc.isdigit() else "?"))
    return out


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


def test_every_tile_has_the_same_shape_and_valid_shape_in_both_backends():
    """Over every user program: the set of (rows, cols, v_row, v_col) in the .pto equals the C++ one."""
    checked = 0
    for name, prog in _programs():
        try:
            comp = compile_program(prog)
        except PyptoError:  # programs meant to be rejected are tested elsewhere
            continue
        for kernel, pto in comp.pto.items():
            want = {m.groups() for m in _PTO_TILE.finditer(pto)}
            assert _cpp_tiles(comp.cpp[kernel]) == want, f"{name}.{kernel}"
            checked += 1
    assert checked >= 30
