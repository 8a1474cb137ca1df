"""Red team round 4 of the whole-module verifier: kinds of invalid kernel the must-reject table and
the earlier rounds do not cover - the A5-only ops (tpack, mgather, thistogram) and A5's sync pipe
lists inside never-taken branches, called functions, the generic form and the memref level; windows,
valid shapes, steps, view dims and level-3 addresses computed from constants (folded arith) in
branches, callees and tassign; flag and signal ids given as constant SSA values; a branch, a
zero-trip loop or a while region holding an op of the other target; A2/A3's required tmp of tsel /
tsels in a never-taken branch and a callee. Each is rejected before
anything runs (exit 2) at the line marked ``//!`` with a message naming the rule.

Found by this round (fixed with it): a constant SSA event id of set_flag_dyn / wait_flag_dyn, a
constant signal id of sync.set / sync.wait, and a constant tassign address out of range or
misaligned were left to the run (an event-id finding or a capacity fault, exit 1).
"""

from __future__ import annotations

import re

import pytest

import pyptoemu
from pyptoemu.core.verify import ModuleVerifyError
from tests.emulator.core.test_spec_must_reject import MAT, PV, T, alloc, kernel, tb
from tests.emulator.core.test_verify_red_team import (
    A5,
    I8,
    UI8,
    H,
    in_callee,
    memref,
    never,
    two_functions,
    zero_trip,
)

I32, I16 = tb(dtype="i32"), tb(dtype="i16")

CASES: dict[str, tuple[str, str]] = {
    "never: tpack on a2a3": (
        never(alloc("s", I32) + alloc("d", I16) + f"    pto.tpack ins(%s : {I32}) outs(%d : {I16}) //!\n"),
        r"pto.tpack exists only on a5"),
    "callee: mgather on a2a3": (
        in_callee(alloc("i", I32) + alloc("d", T) + f"    pto.mgather ins(%p0, %i : {PV}, {I32}) outs(%d : {T}) //!\n"),
        r"pto.mgather exists only on a5"),
    "generic: tpack on a2a3": (
        kernel(alloc("s", I32) + alloc("d", I16) + f'    "pto.tpack"(%s, %d) : ({I32}, {I16}) -> () //!\n'),
        r"pto.tpack exists only on a5"),
    "memref: tpack on a2a3": (
        kernel(f"    %m = memref.alloc() : {memref('vec','i32')}\n    %n = memref.alloc() : {memref('vec','i16')}\n    pto.tpack ins(%m : {memref('vec','i32')}) outs(%n : {memref('vec','i16')}) //!\n"),
        r"pto.tpack exists only on a5"),
    "never a5: sync.wait M": (
        never("    pto.sync.wait <PIPE_M>, 0 //!\n").replace("module {", "module" + A5 + " {"),
        r"sync.wait on a5: pipe M cannot wait"),
    "callee a5: sync.set V": (
        in_callee("    pto.sync.set <PIPE_V>, 1 //!\n").replace("module {", "module" + A5 + " {"),
        r"sync.set on a5: pipe V cannot raise"),
    "folded step 0": (
        kernel("    %z = arith.subi %c1, %c1 : index\n    scf.for %i = %c0 to %c16 step %z { //!\n    }\n"),
        r"scf.for step must be positive, got 0"),
    "folded textract past source": (
        kernel(alloc("s", T) + alloc("d", T) + "    %r = arith.addi %c1, %c16 : index\n" + f"    pto.textract ins(%s, %r, %c0 : {T}, index, index) outs(%d : {T}) //!\n"),
        r"window at \(17, 0\) of 16x64 leaves the 16x64 source"),
    "folded valid_row beyond": (
        kernel("    %c99 = arith.muli %c16, %c16 : index\n" + f"    %t = pto.alloc_tile valid_row = %c99 valid_col = %c16 : {tb(vr='?', vc='?')} //!\n"),
        r"valid region 256x16 outside the tile shape 16x64"),
    "folded negative view dim": (
        kernel("    %cm = arith.subi %c0, %c16 : index\n    %w = pto.make_tensor_view %arg0, shape = [%cm, %c64], strides = [%c64, %c1] : !pto.tensor_view<?x?xf32> //!\n"),
        r"negative dimension in shape \[-16, 64\]"),
    "folded size mismatch": (
        kernel("    %c8 = arith.divsi %c16, %c2x : index\n    %w = pto.partition_view %v0, offsets = [%c0, %c0], " + f"sizes = [%c8, %c64] : !pto.tensor_view<?x?xf32> -> {PV} //!\n").replace("    %c8 = arith.divsi", "    %c2x = arith.constant 2 : index\n    %c8 = arith.divsi"),
        r"size 8 of dim 0 but the result type"),
    "folded sync.set id 16": (
        kernel("    %id = arith.addi %c16, %c0 : index\n    pto.sync.set <PIPE_MTE3>, %id //!\n"),
        r"pto.sync.set: signal id 16 is out of range"),
    "folded set_flag_dyn id 8": (
        kernel("    %e = arith.constant 8 : index\n    pto.set_flag_dyn[<PIPE_V>, <PIPE_MTE3>, %e] //!\n"),
        r"pto.set_flag_dyn: event id 8 is out of range"),
    "level3 tassign misaligned": (
        kernel(alloc("t", T) + "    %a = arith.constant 7 : i64\n" + f"    %u = pto.tassign %t, %a : {T} -> {T} //!\n"),
        r"pto.tassign: address 7 in UB is not a multiple of its 32-byte alignment"),
    "level3 tassign past end": (
        kernel(alloc("t", T) + "    %a = arith.constant 196608 : i64\n" + f"    %u = pto.tassign %t, %a : {T} -> {T} //!\n"),
        r"pto.tassign: 4096 bytes at address 196608 exceed UB capacity"),
    "level3 callee folded addr": (
        in_callee("    %a = arith.constant 8 : i64\n    %b = arith.muli %a, %a : i64\n    %c = arith.addi %b, %a : i64\n" + f"    %t = pto.alloc_tile addr = %c : {T} //!\n"),
        r"address 72 in UB is not a multiple"),
    "never: generic tadd missing operand": (
        never(alloc("a", T) + f'    "pto.tadd"(%a, %a) : ({T}, {T}) -> () //!\n'),
        r"expected at least 3 operands"),
    "never: memref too big": (
        never("    %m = memref.alloc() : memref<1024x64xf32, #pto.address_space<vec>> //!\n"),
        r"needs at least 262144 bytes but UB"),
    "never: call with wrong arg count": (
        two_functions("    %false = arith.constant false\n    scf.if %false {\n      func.call @h(%arg0, %arg0) : (!pto.ptr<f32>, !pto.ptr<f32>) -> () //!\n    }\n", "(%arg0: !pto.ptr<f32>)", "  func.func private @h(%arg0: !pto.ptr<f32>) {\n    return\n  }\n"),
        r"@h takes 1 arguments, 2 given"),
    "while in callee: tadd i8": (
        in_callee("    %r = scf.while (%i = %c0) : (index) -> index {\n      %cz = arith.constant 1 : index\n      %p = arith.cmpi slt, %i, %cz : index\n      scf.condition(%p) %i : index\n    } do {\n    ^bb0(%j: index):\n" + alloc("b", I8) + f"      pto.tadd ins(%b, %b : {I8}, {I8}) outs(%b : {I8}) //!\n      scf.yield %j : index\n    }}\n".replace("}}", "}")),
        r"pto.tadd: destination element type i8 is not supported"),
    "never: thistogram a2a3": (
        never(alloc("s", tb(16, 64, "ui16")) + alloc("i", tb(16, 1, "ui8", bl="col_major")) + alloc("d", tb(16, 256, "ui32")) + f"    pto.thistogram ins(%s, %i : {tb(16, 64, 'ui16')}, {tb(16, 1, 'ui8', bl='col_major')}) outs(%d : {tb(16, 256, 'ui32')}) //!\n"),
        r"pto.thistogram exists only on a5"),
    "a5 zero-trip: tstore mat": (
        zero_trip(alloc("m", MAT) + f"    pto.tstore ins(%m : {MAT}) outs(%p1 : {PV}) //!\n").replace("module {", "module" + A5 + " {"),
        r"src 'mat' exists only on a2a3"),
    "folded tinsert past dest": (
        kernel(alloc("s", H) + alloc("d", T) + "    %cc = arith.muli %c16, %c4x : index\n" + f"    pto.tinsert ins(%s, %c0, %cc : {H}, index, index) outs(%d : {T}) //!\n").replace("    %cc = arith.muli", "    %c4x = arith.constant 4 : index\n    %cc = arith.muli"),
        r"window at \(0, 64\) of 16x32 leaves the 16x64 destination"),
    "folded set_validshape outside": (
        kernel(f"    %t = pto.alloc_tile valid_row = %c16 valid_col = %c16 : {tb(vr='?', vc='?')}\n    %c99 = arith.addi %c64, %c64 : index\n    pto.set_validshape %t, %c99, %c16 : {tb(vr='?', vc='?')} //!\n"),
        r"valid shape 128x16 outside the tile's 16x64"),
    "i32 constant literal too big in callee": (
        in_callee("    %x = arith.constant 4294967296 : i32 //!\n"),
        r"arith.constant 4294967296 is out of range for i32"),
    "never: tdiv i32 on a2a3": (
        never(alloc("a", I32) + f"    pto.tdiv ins(%a, %a : {I32}, {I32}) outs(%a : {I32}) //!\n"),
        r"pto.tdiv: destination element type i32 is not supported"),
    "zero-trip: tshl on f32": (
        zero_trip(alloc("a", T) + f"    pto.tshl ins(%a, %a : {T}, {T}) outs(%a : {T}) //!\n"),
        r"pto.tshl: destination element type f32 is not supported"),
    "never: trem with scalar": (
        never(alloc("a", I32) + f"    %s = arith.constant 0 : i32\n    pto.trem ins(%a, %s, %a : {I32}, i32, {I32}) outs(%a : {I32}) //!\n"),
        r"pto.trem: ins operand 1 \(%s\) must be a tile"),
    "never: tsel without its tmp on a2a3": (
        never(alloc("m", UI8) + alloc("a", T) + f"    pto.tsel ins(%m, %a, %a : {UI8}, {T}, {T}) outs(%a : {T}) //!\n"),
        r"pto.tsel on a2a3 needs its scratch operand tmp"),
    "callee: tsels without its tmp on a2a3": (
        in_callee(alloc("m", UI8) + alloc("a", T) + "    %s = arith.constant 2.0 : f32\n"
                  + f"    pto.tsels ins(%m, %a, %s : {UI8}, {T}, f32) outs(%a : {T}) //!\n"),
        r"pto.tsels on a2a3 needs its scratch operand tmp"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_an_invalid_kernel_of_a_new_kind_is_rejected_before_running(case):
    text, pattern = CASES[case]
    line = next(i for i, ln in enumerate(text.splitlines(), 1) if ln.rstrip().endswith("//!"))
    with pytest.raises(ModuleVerifyError) as info:  # the verifier's error: nothing has run
        pyptoemu.run(text, data=False)
    at_line = [e for e in info.value.errors if e.loc is not None and e.loc.line == line]
    assert at_line, f"{case}: no error at line {line}:\n{info.value}"
    assert any(re.search(pattern, e.message) for e in at_line), f"{case}: /{pattern}/ not in:\n{info.value}"


def test_constant_ids_and_addresses_in_range_still_run():
    """The new static checks leave legal constants alone: id 7 / 15 and an aligned address run."""
    text = kernel(alloc("t", T) + "    %e = arith.constant 7 : index\n    %a = arith.constant 4096 : i64\n"
                  "    pto.set_flag_dyn[<PIPE_V>, <PIPE_MTE3>, %e]\n    pto.wait_flag_dyn[<PIPE_V>, <PIPE_MTE3>, %e]\n"
                  f"    %u = pto.tassign %t, %a : {T} -> {T}\n")
    assert pyptoemu.run(text, data=False, sync="asis").cycles >= 0
