"""Each verifier rule (IR level, target legality, bufferization capacity) rejects a bad program with
an MLIR-style located message: ``file:line:col: error: 'op' op <what>``."""

from __future__ import annotations

import pytest

from ptoisa.errors import VerifyError
from ptoisa.isa.loader import load_isa
from ptoisa.machine import load_machine
from ptoisa.text.parser import parse_module
from ptoisa.tile.pipeline import lower_tile_module

ARGS = "%m: pto.memref<64x64xf32>, %h: pto.memref<64x64xf16>, %i: pto.memref<64x64xi32>, %n: index"
T = "tile<32x32xf32>"
M = "pto.memref<64x64xf32>"
LOAD_A = f"%a = pto.tile.load %m[%c0, %c0] : {M}, {T}"
LOAD_B = f"%b = pto.tile.load %m[%c0, %c32] : {M}, {T}"
MAT = "#pto.tile_info<loc=Mat, layout=Nz>"


def _error(body: list[str], args: str = ARGS, target: str = "a3") -> str:
    lines = [f"module attributes {{pto.target = #pto.target<{target}>}} {{", f"func.func @k({args}) {{",
             "%c0 = pto.constant 0 : index", "%c32 = pto.constant 32 : index", *body, "return", "}", "}"]
    mach = load_machine()
    with pytest.raises(VerifyError) as e:
        lower_tile_module(parse_module("\n".join(lines), "bad.pto"), load_isa(machine=mach), mach)
    return str(e.value)


# (id, body, line of the offending op (1 = module line; body starts at 5), message after "error: ")
CASES = [
    ("dominance", [f"%t = pto.tile.exp %a : {T}", LOAD_A],
     5, "'pto.tile.exp' op uses %a, which is not defined before it (SSA dominance)"),
    ("redefinition", [LOAD_A, f"%a = pto.tile.exp %a : {T}"],
     6, "'pto.tile.exp' op redefines %a (SSA values are defined once)"),
    ("use-type", [LOAD_A, "%t = pto.tile.exp %a : tile<32x32xf16>"],
     6, "'pto.tile.exp' op operand %a is written as tile<32x32xf16> but defined as tile<32x32xf32>"),
    ("elementwise-shape", [LOAD_A, f"%b = pto.tile.load %m[%c0, %c0] : {M}, tile<16x32xf32>",
                           f"%t = pto.tile.add %a, %b : {T}, tile<16x32xf32> -> {T}"],
     7, "'pto.tile.add' op tile rank, shape and element type must match: tile<16x32xf32> vs result tile<32x32xf32>"),
    ("valid-zero", [f"%a = pto.tile.load %m[%c0, %c0] {{valid = [0, 32]}} : {M}, {T}"],
     5, "'pto.tile.load' op valid[0] = 0 is outside (0, 32] (0 < valid[d] <= shape[d])"),
    ("valid-over", [LOAD_A, f"%t = pto.tile.exp %a {{valid = [32, 33]}} : {T}"],
     6, "'pto.tile.exp' op valid[1] = 33 is outside (0, 32] (0 < valid[d] <= shape[d])"),
    ("valid-rank", [f"%a = pto.tile.load %m[%c0, %c0] {{valid = [8]}} : {M}, {T}"],
     5, "'pto.tile.load' op valid has 1 entries for a rank-2 tile"),
    ("valid-index-type", ["%f = pto.constant 1.0 : f32", f"%a = pto.tile.load %m[%c0, %c0] {{valid = [%f, 8]}} : {M}, {T}"],
     6, "'pto.tile.load' op index operand %f has type f32, expected index"),
    ("extract-bounds", [f"%s = pto.tile.load %h[%c0, %c0] : pto.memref<64x64xf16>, tile<32x32xf16, {MAT}>",
                        "%d = pto.tile.extract %s[%c0, %c32] : tile<32x32xf16> -> tile<16x16xf16, #pto.tile_info<loc=Left, layout=Zz>>"],
     6, "'pto.tile.extract' op extract out of bounds in dim 1: [32, 48) of a source of 32"),
    ("extract-rank", [f"%s = pto.tile.load %h[%c0, %c0] : pto.memref<64x64xf16>, tile<32x32xf16, {MAT}>",
                      "%d = pto.tile.extract %s[%c0] : tile<32x32xf16> -> tile<16x16xf16>"],
     6, "'pto.tile.extract' op takes 2 indices [%r, %c], got 1"),
    ("matmul-k", ["%l = pto.tile.load %h[%c0, %c0] : pto.memref<64x64xf16>, tile<16x32xf16>",
                  "%r = pto.tile.load %h[%c0, %c0] : pto.memref<64x64xf16>, tile<16x16xf16>",
                  "%c = pto.tile.matmul %l, %r : tile<16x32xf16>, tile<16x16xf16> -> tile<16x16xf32>"],
     7, "'pto.tile.matmul' op inner dimensions differ: tile<16x32xf16> x tile<16x16xf16>"),
    ("matmul-loc", ["%l = pto.tile.load %h[%c0, %c0] : pto.memref<64x64xf16>, tile<16x16xf16, #pto.tile_info<loc=Vec, layout=ND>>",
                    "%c = pto.tile.matmul %l, %l : tile<16x16xf16>, tile<16x16xf16> -> tile<16x16xf32>",
                    "pto.tile.store %c, %m[%c0, %c0] : pto.memref<64x64xf32>, tile<16x16xf32>"],
     6, "'pto.tile.matmul' op the left operand must be in loc Left, not Vec"),
    ("mov-loc", [LOAD_A, f"%v = pto.tile.mov.m2l %a : tile<32x32xf32, #pto.tile_info<loc=Vec, layout=ND>> -> {T}"],
     6, "'pto.tile.mov.m2l' op the source must be in loc Mat, not Vec"),
    ("mov-src", [f"%a = pto.tile.load %m[%c0, %c0] {{loc = #pto.loc<Vec>}} : {M}, tile<32x32xf32, #pto.tile_info<loc=Vec, layout=ND>>",
                 f"%v = pto.tile.mov.m2l %a : tile<32x32xf32, #pto.tile_info<loc=Vec, layout=ND>> -> {T}"],
     6, "'pto.tile.mov.m2l' op the source must be in loc Mat, not Vec"),
    ("reduce-shape", [LOAD_A, f"%s = pto.tile.rowsum %a : {T} -> tile<1x32xf32>"],
     6, "'pto.tile.rowsum' op result must be tile<32x1xf32>, got tile<1x32xf32>"),
    ("scalar-operand", [LOAD_A, f"%s = pto.tile.adds %a, %c0 : {T}, index -> {T}"],
     6, "'pto.tile.adds' op scalar operand has type index, expected an element-type scalar"),
    ("token-as-operand", [f"%a, %e = pto.tile.load %m[%c0, %c0] : {M}, {T}, !pto.event", "%x = pto.addi %e, %c0 : index"],
     6, "'pto.addi' op uses the event token %e as an operand: tokens may only appear in the wait(...) list of an op that may wait"),
    ("wait-non-token", [LOAD_A, f"%t = pto.tile.exp %a wait(%c0) : {T}"],
     6, "'pto.tile.exp' op waits on %c0, which is not an event token (it is index)"),
    ("event-producer", [f"%a, %e = pto.tile.load %m[%c0, %c0] : {M}, {T}, !pto.event<producer = #pto.op<TADD>>"],
     5, "'pto.tile.load' op event producer is #pto.op<TADD>, but this op produces #pto.op<TLOAD>"),
    ("load-indices", [f"%a = pto.tile.load %m[%c0] : {M}, {T}"],
     5, "'pto.tile.load' op takes 2 indices into the memref, got 1"),
    ("load-window", ["%c48 = pto.constant 48 : index", f"%a = pto.tile.load %m[%c48, %c0] : {M}, {T}"],
     6, "'pto.tile.load' op tile window [48, 80) of dim 0 exceeds the memref's 64"),
    ("load-elem", [f"%a = pto.tile.load %m[%c0, %c0] : {M}, tile<32x32xf16>"],
     5, "'pto.tile.load' op element types differ: memref f32, tile f16"),
    ("subview-sizes", [f"%s = pto.memref.subview %m[%c0, %c0] [32, 16] [1, 1] : {M} to pto.memref<32x32xf32, strided<[64, 1], offset: ?>>"],
     5, "'pto.memref.subview' op result shape 32x32 differs from the sizes [32x16]"),
    ("unknown-op", [LOAD_A, f"%t = pto.tile.frobnicate %a : {T}"],
     6, "'pto.tile.frobnicate' op is not a tile op (no such pto.tile.* op or level-2 instruction)"),
    ("index-op-type", ["%f = pto.constant 1.0 : f32", "%x = pto.muli %f, %c0 : index"],
     6, "'pto.muli' op operand %f has type f32, expected index"),
    ("if-condition", [LOAD_A, "scf.if %c0 {", f"%t = pto.tile.exp %a : {T}", f"pto.tile.store %t, %m[%c0, %c0] : {M}, {T}", "}"],
     6, "'scf.if' op condition has type index, expected i1"),
    # target legality
    ("target-dtype", ["%a = pto.tile.load %i[%c0, %c0] : pto.memref<64x64xi32>, tile<32x32xi32>",
                      "%t = pto.tile.exp %a : tile<32x32xi32>",
                      "pto.tile.store %t, %i[%c0, %c0] : pto.memref<64x64xi32>, tile<32x32xi32>"],
     6, "'pto.tile.exp' op element type i32 is not supported by texp on this target (supported: f16, f32)"),
    ("target-layout", ["%l = pto.tile.load %h[%c0, %c0] : pto.memref<64x64xf16>, tile<16x16xf16, #pto.tile_info<loc=Mat, layout=Nz>>",
                       "%a = pto.tile.mov.m2l %l : tile<16x16xf16> -> tile<16x16xf16, #pto.tile_info<loc=Left, layout=ND>>",
                       "%b = pto.tile.mov.m2r %l : tile<16x16xf16> -> tile<16x16xf16>",
                       "%c = pto.tile.matmul %a, %b : tile<16x16xf16>, tile<16x16xf16> -> tile<16x16xf32>",
                       "pto.tile.store %c, %m[%c0, %c0] : pto.memref<64x64xf32>, tile<16x16xf32>"],
     6, "'pto.tile.mov.m2l' op layout ND is not legal in loc Left (legal: Zz)"),
    ("target-row-alignment", ["%a = pto.tile.load %m[%c0, %c0] : pto.memref<64x64xf32>, tile<8x3xf32>", "pto.tile.store %a, %m[%c0, %c0] : pto.memref<64x64xf32>, tile<8x3xf32>"],
     5, "'pto.tile.load' op tile tile<8x3xf32, #pto.tile_info<loc=Vec, layout=ND>>: a row of 12 bytes is not a multiple of 32 bytes"),
    ("target-dynamic", [f"%a = pto.tile.load %m[%c0, %c0] : {M}, tile<?x32xf32>", "pto.tile.store %a, %m[%c0, %c0] : pto.memref<64x64xf32>, tile<?x32xf32>"],
     5, "'pto.tile.load' op tile tile<?x32xf32, #pto.tile_info<loc=Vec, layout=ND>> has a dynamic dim; tile buffers need static shapes (use valid = [...])"),
    ("target-rank", ["%a = pto.tile.load %n3[%c0, %c0, %c0] : pto.memref<4x8x8xf32>, tile<4x8x8xf32>", "pto.tile.store %a, %n3[%c0, %c0, %c0] : pto.memref<4x8x8xf32>, tile<4x8x8xf32>"],
     5, "'pto.tile.load' op tile tile<4x8x8xf32, #pto.tile_info<loc=Vec, layout=ND>> has rank 3; tile buffers are 2-D on this target"),
    ("target-capacity", ["%a = pto.tile.load %big[%c0, %c0] : pto.memref<256x256xf32>, tile<256x256xf32>", "pto.tile.store %a, %big[%c0, %c0] : pto.memref<256x256xf32>, tile<256x256xf32>"],
     5, "'pto.tile.load' op tile tile<256x256xf32, #pto.tile_info<loc=Vec, layout=ND>> needs 262144 bytes but UB holds 196608"),
    # bufferization: live tiles beyond the buffer
    ("buffer-capacity", [f"%x{i} = pto.tile.load %big[%c0, %c0] : pto.memref<256x256xf32>, tile<128x128xf32>" for i in range(3)]
     + ["%s = pto.tile.add %x0, %x1 : tile<128x128xf32>", "%u = pto.tile.add %s, %x2 : tile<128x128xf32>",
        "pto.tile.store %u, %big[%c0, %c0] : pto.memref<256x256xf32>, tile<128x128xf32>"],
     8, "'pto.tile.add' op its tile needs 65536 bytes of UB but only 0 of 196608 are free here (3 live tiles)"),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_bad_program_is_rejected_with_a_located_message(case):
    _id, body, line, message = case
    args = ARGS + ", %n3: pto.memref<4x8x8xf32>, %big: pto.memref<256x256xf32>"
    assert _error(body, args) == f"bad.pto:{line}:1: error: {message}"


def test_event_function_argument_is_rejected():
    assert _error([], ARGS + ", %e: !pto.event") == (
        "bad.pto:2:1: error: argument %e of @k is an event token: tokens are produced by tile ops, not passed in")


def test_unsupported_target_is_rejected_at_the_module():
    assert _error([LOAD_A, f"pto.tile.store %a, %m[%c0, %c0] : {M}, {T}"], target="a5") == (
        "bad.pto:1:1: error: target 'a5' is not supported by machine 'a2a3' (A2/A3 targets: a2, a3, a2a3)")
