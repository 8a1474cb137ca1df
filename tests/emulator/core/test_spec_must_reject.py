"""The must-reject table: one small kernel per rule pto-text-format.md states as a must, a
requirement, an "only", or something the assembler rejects (found by grepping the spec for
must/illegal/invalid/reject/only/requires/not allowed/forbid). The PTO toolchain's own negative
tests are not available here, so the spec text is the reference.

Each kernel breaks exactly one rule, on the line marked ``//!``; ``pyptoemu run`` must exit 2
(bad input) and print ``file:LINE:col:`` with a message naming the rule. Rules whose violation
the spec leaves to the back end as a warning (§5.3 alignment) are in ``test_alignment_warnings``.
"""

from __future__ import annotations

import re

import pytest

from pyptoemu.cli import main


def tb(rows: int = 16, cols: int = 64, dtype: str = "f32", loc: str = "vec", vr: int | str | None = None,
       vc: int | str | None = None, bl: str = "row_major", sl: str = "none_box", fractal: int = 512,
       pad: int = 0) -> str:
    """A ``!pto.tile_buf`` type in the verbose form (valid region = shape unless given)."""
    vr = rows if vr is None else vr
    vc = cols if vc is None else vc
    return (f"!pto.tile_buf<loc={loc}, dtype={dtype}, rows={rows}, cols={cols}, v_row={vr}, v_col={vc}, "
            f"blayout={bl}, slayout={sl}, fractal={fractal}, pad={pad}>")


T = tb()
PV = "!pto.partition_tensor_view<16x64xf32>"
DN = tb(16, 1, bl="col_major")  # a DN column vector, what row reductions write
LEFT = tb(16, 32, "f16", "left", sl="row_major")
RIGHT = tb(32, 16, "f16", "right", sl="col_major")
ACC = tb(16, 16, "f32", "acc", bl="col_major", sl="row_major", fractal=1024)


def kernel(body: str, attrs: str = "") -> str:
    """A vector kernel ``@k(%arg0, %arg1: !pto.ptr<f32>)`` with 16x64 windows ``%p0``, ``%p1`` over
    them, a few constants, and ``body``."""
    return f"""module{attrs} {{
  func.func @k(%arg0: !pto.ptr<f32>, %arg1: !pto.ptr<f32>) {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %c64 = arith.constant 64 : index
    %c0_i64 = arith.constant 0 : i64
    %f = arith.constant 1.0 : f32
    %v0 = pto.make_tensor_view %arg0, shape = [%c16, %c64], strides = [%c64, %c1] : !pto.tensor_view<?x?xf32>
    %v1 = pto.make_tensor_view %arg1, shape = [%c16, %c64], strides = [%c64, %c1] : !pto.tensor_view<?x?xf32>
    %p0 = pto.partition_view %v0, offsets = [%c0, %c0], sizes = [%c16, %c64] : !pto.tensor_view<?x?xf32> -> {PV}
    %p1 = pto.partition_view %v1, offsets = [%c0, %c0], sizes = [%c16, %c64] : !pto.tensor_view<?x?xf32> -> {PV}
{body}
    return
  }}
}}
"""


def alloc(name: str, ty: str) -> str:
    return f"    %{name} = pto.alloc_tile : {ty}\n"


def op1(mnemonic: str, src: str, sty: str, dst: str, dty: str, attrs: str = "") -> str:
    return f"    pto.{mnemonic} ins(%{src} : {sty}) outs(%{dst} : {dty}){attrs} //!\n"


def op2(mnemonic: str, a: str, aty: str, b: str, bty: str, dst: str, dty: str) -> str:
    return f"    pto.{mnemonic} ins(%{a}, %{b} : {aty}, {bty}) outs(%{dst} : {dty}) //!\n"


RECURSIVE = """module {
  func.func @k(%arg0: !pto.ptr<f32>) attributes {pto.entry} {
    func.call @k(%arg0) : (!pto.ptr<f32>) -> () //!
    return
  }
}
"""
RETURNS = """module {
  func.func @k(%arg0: !pto.ptr<f32>) -> i32 { //!
    %r = arith.constant 1 : i32
    return %r : i32
  }
}
"""
PTR2 = "module {\n  func.func @k(%arg0: !pto.ptr<f32, 1>) { //!\n    return\n  }\n}\n"

F16, I8, I32 = tb(dtype="f16"), tb(dtype="i8"), tb(dtype="i32")
MAT = tb(16, 64, loc="mat", bl="col_major", sl="row_major")
A5 = ' attributes {pto.target_arch = "a5"}'

# name -> (spec section, kernel text, message pattern naming the rule)
RULES: dict[str, tuple[str, str, str]] = {
    # --- functions (§1.3) and types (§2)
    "entry returns nothing": ("§1.3", RETURNS, r"entry @k returns a value"),
    "entry not recursive": ("§1.3", RECURSIVE, r"recursive call"),
    "ptr takes one element type": ("§2.2", PTR2, r"exactly one element type"),
    "v_row <= rows": ("§2.5, §5.3", kernel(alloc("t", tb(vr=17)).rstrip() + " //!\n"), r"v_row.*17.*rows.*16|17.*16"),
    "v_col <= cols": ("§2.5, §5.3", kernel(alloc("t", tb(vc=65)).rstrip() + " //!\n"), r"v_col.*65.*cols.*64|65.*64"),
    "fractal in {16, 32, 512, 1024}": ("§2.5, §5.3", kernel(alloc("t", tb(fractal=256)).rstrip() + " //!\n"),
                                       r"fractal"),
    "pad in 0..3": ("§2.5, §5.3", kernel(alloc("t", tb(pad=5)).rstrip() + " //!\n"), r"pad"),
    "cmp mode spelled lt, not less_than": (
        "§2.9", kernel(alloc("a", T) + alloc("m", tb(16, 64, "ui8"))
                       + f"    pto.tcmp ins(%a, %a {{cmpMode = #pto<cmp less_than>}} : {T}, {T}) "
                         f"outs(%m : {tb(16, 64, 'ui8')}) //!\n"), r"less_than"),
    # --- views and allocation (§4.1)
    "make_tensor_view: as many strides as dims": (
        "§4.1", kernel("    %w = pto.make_tensor_view %arg0, shape = [%c16, %c64], strides = [%c64] "
                       ": !pto.tensor_view<?x?xf32> //!\n"), r"stride"),
    "make_tensor_view: ptr element type = view element type": (
        "§4.1", kernel("    %w = pto.make_tensor_view %arg0, shape = [%c16, %c64], strides = [%c64, %c1] "
                       ": !pto.tensor_view<?x?xf16> //!\n"), r"f16.*f32|f32.*f16"),
    "partition_view: as many offsets and sizes as the rank": (
        "§4.1", kernel("    %w = pto.partition_view %v0, offsets = [%c0], sizes = [%c16, %c64] "
                       ": !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<16x64xf32> //!\n"), r"offset"),
    "alloc_tile: valid_row only with v_row=?": (
        "§4.1", kernel(f"    %t = pto.alloc_tile valid_row = %c16 : {T} //!\n"), r"valid_row"),
    "alloc_tile: v_row=? needs valid_row": (
        "§4.1", kernel(f"    %t = pto.alloc_tile : {tb(vr='?', vc='?')} //!\n"), r"valid_row|v_row=\?"),
    "set_validshape: the type has v_row=?, v_col=?": (
        "§4.1", kernel(alloc("t", T) + f"    pto.set_validshape %t, %c16, %c16 : {T} //!\n"), r"v_row=\?"),
    "set_validshape: within rows/cols": (
        "§4.1", kernel(f"    %t = pto.alloc_tile valid_row = %c16 valid_col = %c16 : {tb(vr='?', vc='?')}\n"
                       f"    %c99 = arith.constant 99 : index\n"
                       f"    pto.set_validshape %t, %c99, %c16 : {tb(vr='?', vc='?')} //!\n"), r"99.*outside"),
    "treshape: same loc": (
        "§4.1", kernel(alloc("t", T) + f"    %r = pto.treshape %t : {T} -> {MAT} //!\n"), r"loc|vec.*mat"),
    "treshape: same total bytes": (
        "§4.1", kernel(alloc("t", T) + f"    %r = pto.treshape %t : {T} -> {tb(32, 64)} //!\n"), r"bytes"),
    "treshape: boxed <-> non-boxed forbidden": (
        "§4.1", kernel(alloc("t", T) + f"    %r = pto.treshape %t : {T} -> {tb(16, 64, sl='row_major', bl='col_major')}"
                                       " //!\n"), r"box"),
    "bitcast: same shape": (
        "§4.1", kernel(alloc("t", T) + f"    %r = pto.bitcast %t : {T} -> {tb(32, 32, 'i32')} //!\n"), r"shape"),
    # --- data movement (§4.2)
    "tload: dst vec or mat": ("§4.2", kernel(alloc("l", LEFT) + op1("tload", "p0", PV, "l", LEFT)),
                              r"tload.*left.*(vec|mat)"),
    "tload: element size equal to the source's": (
        "§4.2", kernel(alloc("h", F16) + op1("tload", "p0", PV, "h", F16)), r"tload.*(size|f16|f32)"),
    "tstore: reluPreMode needs an acc source": (
        "§4.2", kernel(alloc("t", T) + op1("tstore", "t", T, "p1", PV,
                                           " {reluPreMode = #pto<relu_pre_mode normal_relu>}")), r"relu.*acc|acc"),
    "tmov: legal location pairs": ("§4.2", kernel(alloc("t", T) + alloc("l", LEFT) + op1("tmov", "t", T, "l", LEFT)),
                                   r"tmov.*(vec.*left|left)"),
    "tmov: equal static rows/cols (A3)": (
        "§4.2", kernel(alloc("t", T) + alloc("u", tb(16, 32)) + op1("tmov", "t", T, "u", tb(16, 32))),
        r"tmov on a2a3.*16x64.*16x32"),
    "tmov: vec->mat only on A5": ("§4.2", kernel(alloc("t", T) + alloc("m", MAT) + op1("tmov", "t", T, "m", MAT)),
                                  r"tmov.*vec->mat.*a5"),
    "tstore: a mat source only on A2/A3": (
        "§4.2", kernel(alloc("m", MAT) + op1("tstore", "m", MAT, "p1", PV), A5), r"tstore.*mat.*only on a2a3"),
    "tinsert: vec->vec only on A5": (
        "§4.2", kernel(alloc("s", tb(16, 32)) + alloc("d", T)
                       + f"    pto.tinsert ins(%s, %c0, %c0 : {tb(16, 32)}, index, index) outs(%d : {T}) //!\n"),
        r"tinsert.*vec->vec.*a5"),
    "tfillpad: dst pad != 0": ("§4.2, §5.5", kernel(alloc("t", T) + alloc("u", T) + op1("tfillpad", "t", T, "u", T)),
                               r"tfillpad.*pad"),
    "tfillpad: same rows/cols": (
        "§4.2", kernel(alloc("t", T) + alloc("u", tb(16, 32, pad=1)) + op1("tfillpad", "t", T, "u", tb(16, 32, pad=1))),
        r"tfillpad.*(rows|cols|shape|16x)"),
    # --- elementwise (§4.0, §4.3)
    "elementwise: ND tiles": ("§4.0, §4.3", kernel(alloc("d", DN) + op2("tadd", "d", DN, "d", DN, "d", DN)),
                              r"tadd.*ND tiles"),
    "elementwise: sources' valid regions equal dst's": (
        "§4.0, §4.3", kernel(alloc("a", T) + alloc("h", tb(vr=8)) + op2("tadd", "a", T, "h", tb(vr=8), "a", T)),
        r"tadd.*valid region"),
    "elementwise: one dtype": ("§4.0", kernel(alloc("a", T) + alloc("h", F16) + op2("tadd", "a", T, "h", F16, "a", T)),
                               r"tadd.*element type"),
    "elementwise: loc vec": ("§4.0, §4.3", kernel(alloc("m", MAT) + op2("tadd", "m", MAT, "m", MAT, "m", MAT)),
                             r"tadd.*mat.*vec"),
    "elementwise: the op's dtypes (tadd i8 is A5 only)": (
        "§4.3", kernel(alloc("b", I8) + op2("tadd", "b", I8, "b", I8, "b", I8)), r"tadd.*i8.*not supported"),
    "texpands: i8 only on A5": ("§4.4", kernel(alloc("b", I8) + "    %s = arith.constant 1 : i8\n"
                                              + f"    pto.texpands ins(%s : i8) outs(%b : {I8}) //!\n"),
                                r"texpands.*i8.*not supported"),
    "tsel: 8-bit data only on A5": (
        "§4.10", kernel(alloc("m", tb(16, 64, "ui8")) + alloc("b", I8) + alloc("w", tb(1, 16, "ui32"))
                        + f"    pto.tsel ins(%m, %b, %b, %w : {tb(16, 64, 'ui8')}, {I8}, {I8}, {tb(1, 16, 'ui32')}) "
                          f"outs(%b : {I8}) //!\n"),
        r"tsel.*i8.*not supported"),
    "thistogram: A5 only": (
        "§4.11", kernel(alloc("s", tb(16, 64, "ui16")) + alloc("i", tb(16, 1, "ui8", bl="col_major"))
                        + alloc("d", tb(16, 256, "ui32"))
                        + f"    pto.thistogram ins(%s, %i : {tb(16, 64, 'ui16')}, {tb(16, 1, 'ui8', bl='col_major')}) "
                          f"outs(%d : {tb(16, 256, 'ui32')}) //!\n"), r"thistogram exists only on a5"),
    "tdivs: exactly one operand is a tile": (
        "§4.4", kernel(alloc("a", T) + f"    pto.tdivs ins(%a, %a : {T}, {T}) outs(%a : {T}) //!\n"),
        r"tdivs.*(scalar|tile)"),
    # --- reductions and expansion (§4.6, §4.7)
    "row reduction: src ND": (
        "§4.6", kernel(alloc("s", tb(16, 16, bl="col_major")) + alloc("d", DN)
                       + f"    pto.trowsum ins(%s, %s : {tb(16, 16, bl='col_major')}, {tb(16, 16, bl='col_major')}) "
                         f"outs(%d : {DN}) //!\n"), r"trowsum.*(ND|row_major)"),
    "row reduction: src.VR == dst.VR": (
        "§4.6", kernel(alloc("s", T) + alloc("d", tb(8, 1, bl="col_major"))
                       + f"    pto.trowsum ins(%s, %s : {T}, {T}) outs(%d : {tb(8, 1, bl='col_major')}) //!\n"),
        r"trowsum.*(16|8|rows)"),
    "row reduction: one dtype": (
        "§4.6", kernel(alloc("s", T) + alloc("d", tb(16, 1, "f16", bl="col_major"))
                       + f"    pto.trowsum ins(%s, %s : {T}, {T}) outs(%d : {tb(16, 1, 'f16', bl='col_major')}) //!\n"),
        r"trowsum.*element type"),
    "column reduction: src.VC == dst.VC": (
        "§4.6", kernel(alloc("s", T) + alloc("d", tb(1, 32)) + op1("tcolsum", "s", T, "d", tb(1, 32))),
        r"tcolsum.*(64|32|cols)"),
    "trowexpand: src.VR == dst.VR": (
        "§4.7", kernel(alloc("s", tb(8, 1, bl="col_major")) + alloc("d", T)
                       + op1("trowexpand", "s", tb(8, 1, bl="col_major"), "d", T)), r"trowexpand.*(8|16|rows)"),
    "tcolexpand: src.VC == dst.VC": (
        "§4.7", kernel(alloc("s", tb(1, 32)) + alloc("d", T) + op1("tcolexpand", "s", tb(1, 32), "d", T)),
        r"tcolexpand.*(32|64|cols)"),
    "trowexpand ops: dst row-major": (
        "§4.7", kernel(alloc("a", tb(16, 16, bl="col_major")) + alloc("r", DN)
                       + op2("trowexpandmul", "a", tb(16, 16, bl="col_major"), "r", DN, "a", tb(16, 16, bl="col_major"))),
        r"trowexpandmul.*(row_major|ND|col_major)"),
    # --- matmul (§4.8)
    "matmul: a.cols == b.rows": (
        "§4.8", kernel(alloc("a", LEFT) + alloc("b", tb(16, 16, "f16", "right", sl="col_major")) + alloc("c", ACC)
                       + op2("tmatmul", "a", LEFT, "b", tb(16, 16, "f16", "right", sl="col_major"), "c", ACC)),
        r"tmatmul.*K must agree"),
    "matmul: dtype triple": (
        "§4.8", kernel(alloc("a", LEFT) + alloc("b", tb(32, 16, "f32", "right", sl="col_major")) + alloc("c", ACC)
                       + op2("tmatmul", "a", LEFT, "b", tb(32, 16, "f32", "right", sl="col_major"), "c", ACC)),
        r"tmatmul.*legal"),
    # --- conversion, compare (§4.9, §4.10)
    "tcvt: same rows/cols": ("§4.9", kernel(alloc("s", T) + alloc("d", tb(16, 32, "f16"))
                                            + op1("tcvt", "s", T, "d", tb(16, 32, "f16"))), r"tcvt.*(rows|cols|16x)"),
    "tcvt: a conversion the target has": (
        "§4.9", kernel(alloc("s", tb(16, 64, "ui8")) + alloc("d", T) + op1("tcvt", "s", tb(16, 64, "ui8"), "d", T)),
        r"tcvt.*does not convert ui8 to f32"),
    "tcmp: A2/A3 compares i32 only for eq": (
        "§4.10", kernel(alloc("a", I32) + alloc("m", tb(16, 64, "ui8"))
                        + f"    pto.tcmp ins(%a, %a {{cmpMode = #pto<cmp lt>}} : {I32}, {I32}) "
                          f"outs(%m : {tb(16, 64, 'ui8')}) //!\n"), r"tcmp.*i32.*eq"),
    # --- other data ops, targets, sync, FIFOs (§4.11-§4.13)
    "tci: a one-row tile": ("§4.11", kernel(alloc("d", I32) + "    %s = arith.constant 0 : i32\n"
                                            + f"    pto.tci ins(%s : i32) outs(%d : {I32}) //!\n"), r"tci.*(row|1x)"),
    "trandom: A5 only": ("§4.11", kernel(alloc("d", I32) + "    %s = arith.constant 0 : i32\n"
                                         + f"    pto.trandom ins(%s, %s, %s, %s, %s, %s : i32, i32, i32, i32, i32, i32) "
                                           f"outs(%d : {I32}) //!\n"), r"trandom exists only on a5"),
    "tpack: A5 only": ("§4.2", kernel(alloc("s", I32) + alloc("d", tb(dtype="i16"))
                                      + op1("tpack", "s", I32, "d", tb(dtype="i16"))), r"tpack exists only on a5"),
    "mgather: A5 only": (
        "§4.2", kernel(alloc("i", I32) + alloc("d", T)
                       + f"    pto.mgather ins(%p0, %i : {PV}, {I32}) outs(%d : {T}) //!\n"), r"mgather exists only on a5"),
    "mscatter: A5 only": (
        "§4.2", kernel(alloc("s", T) + alloc("i", I32)
                       + f"    pto.mscatter ins(%s, %i : {T}, {I32}) outs(%p1 : {PV}) //!\n"),
        r"mscatter exists only on a5"),
    "tsel: tmp required on A2/A3": (
        "§4.0, §4.10", kernel(alloc("m", tb(16, 64, "ui8")) + alloc("a", T)
                              + f"    pto.tsel ins(%m, %a, %a : {tb(16, 64, 'ui8')}, {T}, {T}) outs(%a : {T}) //!\n"),
        r"tsel on a2a3 needs its scratch operand tmp"),
    "sync.set on A5: pipe FIX or MTE3": ("§4.12", kernel("    pto.sync.set <PIPE_V>, 0 //!\n", A5),
                                         r"sync.set on a5: pipe V cannot raise.*FIX, MTE3"),
    "sync.wait on A5: pipe FIX, MTE1, MTE2, MTE3 or V": (
        "§4.12", kernel("    pto.sync.wait <PIPE_M>, 0 //!\n", A5), r"sync.wait on a5: pipe M cannot wait.*FIX, MTE1"),
    "event ids 0..7": ("§2.9, §4.12", kernel("    pto.set_flag[<PIPE_V>, <PIPE_MTE3>, <EVENT_ID8>] //!\n"),
                       r"event id 8"),
    "sync.set ids 0..15": ("§4.12", kernel("    pto.sync.set <PIPE_MTE3>, 16 //!\n"), r"16"),
    "reserve_buffer: auto = false needs base": (
        "§4.13", kernel('    %b = pto.reserve_buffer {name = "f", size = 8192, location = #pto.address_space<vec>, '
                        'auto = false} -> i32 //!\n'), r"base"),
    "reserve_buffer: auto = true takes no base": (
        "§4.13", kernel('    %b = pto.reserve_buffer {name = "f", size = 8192, location = #pto.address_space<vec>, '
                        'auto = true, base = 4096} -> i32 //!\n'), r"base"),
}

# Rules the emulator does not enforce yet: each with the reason (strict: an enforced rule fails here)
NOT_ENFORCED: dict[str, str] = {}
# Not a rule: a row reduction written without its tmp operand (spec §4.6 "Legacy: ... Accepting it is
# harmless", and §7 "Variants a parser must tolerate" item 11) runs on A2/A3 too: tests/emulator/core/forms/legacy.pto.


def _params() -> list:
    out = []
    for name in RULES:
        marks = [pytest.mark.xfail(strict=True, reason=NOT_ENFORCED[name])] if name in NOT_ENFORCED else []
        out.append(pytest.param(name, marks=marks, id=name))
    return out


@pytest.mark.parametrize("rule", _params())
def test_spec_rule_is_rejected_at_its_line(rule, tmp_path, capsys):
    section, text, pattern = RULES[rule]
    line = next(i for i, ln in enumerate(text.splitlines(), 1) if ln.rstrip().endswith("//!"))
    path = tmp_path / "k.pto"
    path.write_text(text)
    code = main(["run", str(path), "--no-data", "--quiet", "--output-dir", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2, f"{rule} ({section}): exit {code}\n{err}"
    assert "Traceback" not in err
    located = [ln for ln in err.splitlines() if ln.startswith(f"{path}:{line}:")]
    assert located, f"{rule} ({section}): no error at line {line}:\n{err}"
    assert any(re.search(pattern, ln) for ln in located), f"{rule} ({section}): the message does not name the " \
                                                          f"rule /{pattern}/:\n{err}"
