"""Red team of the whole-module verifier: small kernels the spec says are invalid, written in the
ways the must-reject table (test_spec_must_reject.py) does not cover - the generic op form, the
memref level, inside a branch that never runs, a loop that never iterates or a called function,
and faults decidable from the text's constants (static windows, addresses, capacity, valid shapes,
loop steps), returns and carried values of the wrong count or type, a2a3- vs a5-only rules.

Each is rejected by the verifier (:class:`ModuleVerifyError`, exit 2), so before anything runs,
with an error at the line marked ``//!`` whose message names the rule.
"""

from __future__ import annotations

import re

import pytest

import pyptoemu
from pyptoemu.cli import main
from pyptoemu.core.verify import ModuleVerifyError
from tests.emulator.core.test_spec_must_reject import ACC, LEFT, MAT, PV, RIGHT, T, alloc, kernel, tb

I8, UI8, H = tb(dtype="i8"), tb(16, 64, "ui8"), tb(16, 32)
A5 = ' attributes {pto.target_arch = "a5"}'


def memref(space: str, dtype: str = "f32") -> str:
    return f"memref<16x64x{dtype}, #pto.address_space<{space}>>"


def never(body: str) -> str:
    """``body`` in a branch whose condition is the constant false."""
    return kernel("    %false = arith.constant false\n    scf.if %false {\n" + body + "    }\n")


def zero_trip(body: str) -> str:
    """``body`` in a loop from 0 to 0."""
    return kernel("    scf.for %i = %c0 to %c0 step %c1 {\n" + body + "    }\n")


def in_callee(body: str) -> str:
    """``body`` in a private function the entry calls with the two windows."""
    text = kernel(f"    func.call @h(%p0, %p1) : ({PV}, {PV}) -> ()\n")
    helper = (f"  func.func private @h(%p0: {PV}, %p1: {PV}) {{\n"
              "    %c0 = arith.constant 0 : index\n" + body + "    return\n  }\n")
    end = text.rindex("}")
    return text[:end] + helper + text[end:]


def two_functions(entry_body: str, entry_sig: str, helper: str) -> str:
    return (f"module {{\n  func.func @k{entry_sig} {{\n{entry_body}    return\n  }}\n{helper}}}\n")


# name -> (kernel text with the culprit line marked //!, pattern of its message)
CASES: dict[str, tuple[str, str]] = {
    # --- the generic form and the memref level
    "generic form: tadd on mat tiles": (
        kernel(alloc("m", MAT) + f'    "pto.tadd"(%m, %m, %m) : ({MAT}, {MAT}, {MAT}) -> () //!\n'),
        r"pto.tadd: ins operand 0 \(%m\) is in mat; this op takes vec"),
    "generic form: tmov of unequal static shapes on a2a3": (
        kernel(alloc("t", T) + alloc("u", H) + '    "pto.tmov"(%t, %u) <{operandSegmentSizes = array<i32: 1, 1, 0, 0>}> '
               f": ({T}, {H}) -> () //!\n"), r"pto.tmov on a2a3: the source is 16x64 but the destination 16x32"),
    "generic form: tadd i8 on a2a3": (
        kernel(alloc("b", I8) + f'    "pto.tadd"(%b, %b, %b) : ({I8}, {I8}, {I8}) -> () //!\n'),
        r"pto.tadd: destination element type i8 is not supported"),
    "memref level: tadd on mat buffers": (
        kernel(f"    %m = memref.alloc() : {memref('mat')}\n"
               f"    pto.tadd ins(%m, %m : {memref('mat')}, {memref('mat')}) outs(%m : {memref('mat')}) //!\n"),
        r"pto.tadd: ins operand 0 \(%m\) is in mat"),
    "memref level: tload of f32 into f16": (
        kernel(f"    %m = memref.alloc() : {memref('vec', 'f16')}\n"
               f"    pto.tload ins(%p0 : {PV}) outs(%m : {memref('vec', 'f16')}) //!\n"),
        r"pto.tload: the source's elements are f32 \(4 bytes\) but the destination's f16"),
    "memref level, generic form: tadd i8 on a2a3": (
        kernel(f"    %m = memref.alloc() : {memref('vec', 'i8')}\n"
               f'    "pto.tadd"(%m, %m, %m) : ({memref("vec", "i8")}, {memref("vec", "i8")}, {memref("vec", "i8")}) '
               "-> () //!\n"), r"pto.tadd: destination element type i8"),
    # --- where it never runs
    "never-taken branch: a scalar where a tile belongs": (
        never(alloc("a", T) + f"    pto.tadd ins(%a, %f : {T}, f32) outs(%a : {T}) //!\n"),
        r"pto.tadd: ins operand 1 \(%f\) must be a tile"),
    "never-taken branch: tload into left": (
        never(alloc("l", LEFT) + f"    pto.tload ins(%p0 : {PV}) outs(%l : {LEFT}) //!\n"),
        r"pto.tload: outs operand 0 \(%l\) is in left"),
    "never-taken branch: matmul into a vec tile": (
        never(alloc("a", LEFT) + alloc("b", RIGHT) + alloc("c", tb(16, 16))
              + f"    pto.tmatmul ins(%a, %b : {LEFT}, {RIGHT}) outs(%c : {tb(16, 16)}) //!\n"),
        r"pto.tmatmul: outs operand 0 \(%c\) is in vec; this op takes acc"),
    "never-taken branch: cross-core signal id 16": (
        never("    pto.sync.set <PIPE_MTE3>, 16 //!\n"), r"signal id 16 is out of range"),
    "never-taken branch: tcmp of i8 on a2a3": (
        never(alloc("a", I8) + alloc("m", UI8)
              + f"    pto.tcmp ins(%a, %a {{cmpMode = #pto<cmp eq>}} : {I8}, {I8}) outs(%m : {UI8}) //!\n"),
        r"pto.tcmp: source element type i8 is not supported"),
    "never-taken branch: a tile larger than UB": (
        never(f"    %t = pto.alloc_tile : {tb(1024, 64)} //!\n"), r"needs at least 262144 bytes but UB"),
    "never-taken branch: mutual recursion": (
        two_functions("    %false = arith.constant false\n    scf.if %false {\n"
                      "      func.call @h(%arg0) : (!pto.ptr<f32>) -> ()\n    }\n", "(%arg0: !pto.ptr<f32>)",
                      "  func.func private @h(%arg0: !pto.ptr<f32>) {\n"
                      "    func.call @k(%arg0) : (!pto.ptr<f32>) -> () //!\n    return\n  }\n"),
        r"recursive call \(@k -> @h -> @k\)"),
    "zero-trip loop: a conversion a2a3 lacks": (
        zero_trip(alloc("s", UI8) + alloc("d", T) + f"    pto.tcvt ins(%s : {UI8}) outs(%d : {T}) //!\n"),
        r"a2a3 does not convert ui8 to f32"),
    "zero-trip loop: tmov of unequal static shapes on a2a3": (
        zero_trip(alloc("t", T) + alloc("u", H) + f"    pto.tmov ins(%t : {T}) outs(%u : {H}) //!\n"),
        r"pto.tmov on a2a3"),
    "called function: tadd on mat tiles": (
        in_callee(alloc("m", MAT) + f"    pto.tadd ins(%m, %m : {MAT}, {MAT}) outs(%m : {MAT}) //!\n"),
        r"pto.tadd: ins operand 0 \(%m\) is in mat"),
    "called function: tload of f32 into f16": (
        in_callee(alloc("h", tb(dtype="f16")) + f"    pto.tload ins(%p0 : {PV}) outs(%h : {tb(dtype='f16')}) //!\n"),
        r"pto.tload: the source's elements are f32"),
    # --- faults the constants decide
    "static window outside its tensor view": (
        kernel("    %c8 = arith.constant 8 : index\n    %w = pto.partition_view %v0, offsets = [%c8, %c0], "
               f"sizes = [%c16, %c64] : !pto.tensor_view<?x?xf32> -> {PV} //!\n"),
        r"partition_view: dim 0 window \[8, 24\) is outside the view's size 16"),
    "constant window size other than the result type's": (
        kernel("    %c8 = arith.constant 8 : index\n    %w = pto.partition_view %v0, offsets = [%c0, %c0], "
               f"sizes = [%c8, %c64] : !pto.tensor_view<?x?xf32> -> {PV} //!\n"),
        r"partition_view: size 8 of dim 0 but the result type .* says 16"),
    "negative constant tensor view dimension": (
        kernel("    %cm = arith.constant -4 : index\n    %w = pto.make_tensor_view %arg0, shape = [%cm, %c64], "
               "strides = [%c64, %c1] : !pto.tensor_view<?x?xf32> //!\n"), r"negative dimension in shape \[-4, 64\]"),
    "tload of a window larger than the tile": (
        kernel(alloc("t", tb(8, 64)) + f"    pto.tload ins(%p0 : {PV}) outs(%t : {tb(8, 64)}) //!\n"),
        r"pto.tload: the GM window is 16x64 but the tile holds only 8x64"),
    "textract at a constant row past the source": (
        kernel(alloc("s", T) + alloc("d", T) + f"    pto.textract ins(%s, %c16, %c0 : {T}, index, index) "
                                               f"outs(%d : {T}) //!\n"),
        r"pto.textract: window at \(16, 0\) of 16x64 leaves the 16x64 source"),
    "tinsert at a constant column past the destination": (
        kernel(alloc("s", H) + alloc("d", T) + f"    pto.tinsert ins(%s, %c0, %c64 : {H}, index, index) "
                                               f"outs(%d : {T}) //!\n"),
        r"pto.tinsert: window at \(0, 64\) of 16x32 leaves the 16x64 destination"),
    "misaligned constant tile address": (
        kernel("    %c7 = arith.constant 7 : i64\n" + f"    %t = pto.alloc_tile addr = %c7 : {T} //!\n"),
        r"address 7 in UB is not a multiple of its 32-byte alignment"),
    "constant tile address past the buffer's end": (
        kernel("    %ca = arith.constant 196608 : i64\n" + f"    %t = pto.alloc_tile addr = %ca : {T} //!\n"),
        r"4096 bytes at address 196608 exceed UB capacity of 196608 bytes"),
    "constant valid rows beyond the tile": (
        kernel("    %c99 = arith.constant 99 : index\n"
               f"    %t = pto.alloc_tile valid_row = %c99 valid_col = %c16 : {tb(vr='?', vc='?')} //!\n"),
        r"valid region 99x16 outside the tile shape 16x64"),
    "a tile of zero rows": (kernel(f"    %t = pto.alloc_tile : {tb(0, 64)} //!\n"), r"rows and cols are positive"),
    "constant loop step 0": (kernel("    scf.for %i = %c0 to %c16 step %c0 { //!\n    }\n"),
                             r"scf.for step must be positive, got 0"),
    # --- values in and out of regions and functions
    "a kernel entry returning a tile": (
        kernel(alloc("t", T)).replace("    return\n", f"    return %t : {T} //!\n"),
        r"return gives 1 values but @k returns 0"),
    "a function returning another type than it declares": (
        two_functions("    %r = func.call @h(%arg0) : (!pto.ptr<f32>) -> index\n", "(%arg0: !pto.ptr<f32>)",
                      "  func.func private @h(%arg0: !pto.ptr<f32>) -> index {\n    %c0 = arith.constant 0 : i32\n"
                      "    return %c0 : i32 //!\n  }\n"), r"return: %c0 is a i32 but @h returns a index"),
    "a call binding a result the callee does not return": (
        two_functions("    %r = func.call @h(%arg0) : (!pto.ptr<f32>) -> index //!\n", "(%arg0: !pto.ptr<f32>)",
                      "  func.func private @h(%arg0: !pto.ptr<f32>) {\n    return\n  }\n"),
        r"@h returns 0 values but the call binds 1"),
    "a number where a pointer belongs": (
        two_functions("    %c0 = arith.constant 0 : index\n    %r = func.call @h(%arg0) : (!pto.ptr<f32>) -> index\n"
                      "    %s = pto.addptr %r, %c0 : !pto.ptr<f32> -> !pto.ptr<f32> //!\n", "(%arg0: !pto.ptr<f32>)",
                      "  func.func private @h(%arg0: !pto.ptr<f32>) -> index {\n    %c0 = arith.constant 0 : index\n"
                      "    return %c0 : index\n  }\n"), r"pto.addptr: operand 0 \(%r\) must be a !pto.ptr"),
    "scf.if yielding two values for one result": (
        kernel("    %false = arith.constant false\n    %r = scf.if %false -> (index) {\n"
               "      scf.yield %c0, %c1 : index, index //!\n    } else {\n      scf.yield %c1 : index\n    }\n"),
        r"scf.yield: 2 values yielded but scf.if has 1 results"),
    "scf.for carrying f32 from an index": (
        kernel("    %r = scf.for %i = %c0 to %c16 step %c1 iter_args(%a = %c0) -> (f32) { //!\n"
               "      scf.yield %f : f32\n    }\n"), r"iter_arg 0 starts as %c0, a index, but the loop carries a f32"),
    "scf.while yielding two values for one input": (
        kernel("    %r = scf.while (%i = %c0) : (index) -> index {\n      %p = arith.cmpi slt, %i, %c16 : index\n"
               "      scf.condition(%p) %i : index\n    } do {\n    ^bb0(%j: index):\n"
               "      %n = arith.addi %j, %c1 : index\n      scf.yield %n, %n : index, index //!\n    }\n"),
        r"scf.yield: 2 values passed but there are 1 inputs of the scf.while"),
    "scf.yield outside any scf region": (kernel("    scf.yield %c0 : index //!\n"), r"scf.yield outside an scf region"),
    # --- one target's rules on the other
    "a5: tstore from a mat tile (A2/A3 only)": (
        kernel(alloc("m", MAT) + f"    pto.tstore ins(%m : {MAT}) outs(%p1 : {PV}) //!\n", A5),
        r"pto.tstore: src 'mat' exists only on a2a3"),
    "a5: tmov vec -> left": (
        kernel(alloc("t", T) + alloc("l", LEFT) + f"    pto.tmov ins(%t : {T}) outs(%l : {LEFT}) //!\n", A5),
        r"pto.tmov: no pipe for src_dst 'vec->left'"),
    "a2a3: tmov acc -> mat of unequal static shapes": (
        kernel(alloc("c", ACC) + alloc("m", tb(32, 16, "f32", "mat", bl="col_major", sl="row_major"))
               + f"    pto.tmov ins(%c : {ACC}) outs(%m : {tb(32, 16, 'f32', 'mat', bl='col_major', sl='row_major')})"
                 " //!\n"), r"pto.tmov on a2a3: the source is 16x16 but the destination 32x16"),
}


def _culprit_line(text: str) -> int:
    return next(i for i, ln in enumerate(text.splitlines(), 1) if ln.rstrip().endswith("//!"))


@pytest.mark.parametrize("case", list(CASES))
def test_an_invalid_kernel_is_rejected_before_running_at_its_line(case):
    text, pattern = CASES[case]
    with pytest.raises(ModuleVerifyError) as info:  # raised by the verifier only: nothing has run
        pyptoemu.run(text, data=False)
    assert info.value.exit_code == 2
    line = _culprit_line(text)
    at_line = [e for e in info.value.errors if e.loc is not None and e.loc.line == line]
    assert at_line, f"{case}: no error at line {line}:\n{info.value}"
    assert any(re.search(pattern, e.message) for e in at_line), f"{case}: /{pattern}/ not in:\n{info.value}"


@pytest.mark.parametrize("case", ["generic form: tmov of unequal static shapes on a2a3",
                                  "constant tile address past the buffer's end", "a number where a pointer belongs"])
def test_the_command_line_says_where_with_exit_2(case, tmp_path, capsys):
    text, pattern = CASES[case]
    path = tmp_path / "k.pto"
    path.write_text(text)
    code = main(["run", str(path), "--no-data", "--quiet", "--output-dir", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and "internal error" not in err
    assert re.search(rf"^{re.escape(str(path))}:{_culprit_line(text)}:\d+: .*{pattern}", err, re.MULTILINE), err
    assert not (tmp_path / "out").exists()  # nothing ran, nothing was written


def test_the_a5_only_tmov_move_and_unequal_shapes_verify_on_a5():
    """The target rules cut both ways: vec -> mat and unequal static shapes are legal tmovs on a5."""
    text = kernel(alloc("t", T) + alloc("m", tb(32, 64, "f32", "mat", bl="col_major", sl="row_major"))
                  + f"    pto.tmov ins(%t : {T}) outs(%m : {tb(32, 64, 'f32', 'mat', bl='col_major', sl='row_major')})\n",
                  A5)
    assert pyptoemu.run(text, data=False).cycles > 0
