"""Printer tests: parse -> print -> parse gives an equal AST (locations aside) for whole kernels and
for every Appendix A op, and the printed text uses the canonical forms."""

from __future__ import annotations

from pathlib import Path

import pytest

from ptoisa.text.parser import parse_file, parse_module
from ptoisa.text.printer import format_results, print_module

from .astcmp import module_diff
from .op_lines import APPENDIX_A_NAMES, OP_LINES, TB, wrap

HERE = Path(__file__).parent
DATA = HERE / "data"

CONTROL_FLOW = f"""
module attributes {{pto.target_arch = "a5", "pto.device-spec" = "Ascend950"}} {{
  func.func private @add1(%v: i32) -> i32 {{
    %one = arith.constant 1 : i32
    %r = arith.addi %v, %one : i32
    return %r : i32
  }}
  func.func @main(%x: !pto.ptr<f32>, %n: index, %flag: i1) attributes {{pto.entry}} {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %true = arith.constant true
    %f = arith.constant -1.5e-01 : f32
    %ninf = arith.constant 0xFF800000 : f32
    %k = arith.constant dense<[128, 64, 0, 0]> : vector<4xi16>
    %i32 = arith.index_cast %n : index to i32
    %s = func.call @add1(%i32) : (i32) -> i32
    call @add1(%s) : (i32) -> i32
    %done = scf.for %i = %c0 to %c4 step %c1 iter_args(%alive = %true) -> (i1) {{
      %next = arith.xori %alive, %true : i1
      scf.yield %next : i1
    }}
    %a, %b = scf.if %flag -> (index, i1) {{
      scf.yield %c0, %true : index, i1
    }} else {{
      scf.yield %c1, %done : index, i1
    }}
    %w:2 = scf.while (%i = %c0, %go = %true) : (index, i1) -> (index, i1) {{
      %lt = arith.cmpi slt, %i, %c4 : index
      %ok = arith.andi %lt, %go : i1
      scf.condition(%ok) %i, %go : index, i1
    }} do {{
    ^bb0(%i2: index, %go2: i1):
      %inext = arith.addi %i2, %c1 : index
      scf.yield %inext, %go2 : index, i1
    }}
    scf.if %flag {{
      pto.barrier <PIPE_ALL>
    }} else {{
    }}
    scf.for %j = %w#0 to %n step %c1 {{
      %t = pto.alloc_tile : !pto.tile_buf<vec, 16x64xf32, valid=16x?>
      pto.tprint ins(%t : {TB})
    }}
    "pto.tmov"(%x, %x) <{{operandSegmentSizes = array<i32: 1, 1, 0, 0>}}> : (!pto.ptr<f32>, !pto.ptr<f32>) -> ()
    pto.section.cube {{
      %bi = pto.get_block_idx
    }}
    return
  }}
}}
"""


def roundtrip(text: str) -> str:
    first = parse_module(text)
    printed = print_module(first)
    second = parse_module(printed)
    diff = module_diff(first, second)
    assert diff is None, f"{diff}\n--- printed:\n{printed}"
    assert print_module(second) == printed  # printing is a fixed point
    return printed


@pytest.mark.parametrize("name", ["appendix_b_softmax.pto", "appendix_b_mm16.pto"])
def test_appendix_b_roundtrip(name):
    roundtrip((DATA / name).read_text())


def test_control_flow_kernel_roundtrip():
    printed = roundtrip(CONTROL_FLOW)
    assert "%w:2 = scf.while (%i = %c0, %go = %true) : (index, i1) -> (index, i1) {" in printed
    assert "^bb0(%i2: index, %go2: i1):" in printed
    assert "} else {" in printed
    assert "iter_args(%alive = %true) -> (i1)" in printed
    assert "%ninf = arith.constant 0xFF800000 : f32" in printed
    assert "func.call @add1(%s) : (i32) -> (i32)" in printed


@pytest.mark.parametrize("path", sorted((HERE.parents[2] / "examples").glob("*.pto")), ids=lambda p: p.name)
def test_repository_examples_roundtrip(path):
    first = parse_file(path)
    assert module_diff(first, parse_module(print_module(first))) is None


@pytest.mark.parametrize("name", APPENDIX_A_NAMES)
def test_every_appendix_a_op_roundtrips(name):
    roundtrip(wrap(OP_LINES[name]))


def test_canonical_forms():
    printed = print_module(parse_module(wrap(
        "pto.set_flag[<PIPE_MTE2>, <PIPE_V>, <EVENT_ID0>]\n"
        "%t = pto.alloc_tile : !pto.tile_buf<vec, 16x64xf32, valid=16x?>\n"
        f"pto.tcvt ins(%s{{rmode = #pto<round_mode FLOOR>}} : {TB}) outs(%d : {TB})\n"
        "pto.record_event [#pto.sync_op_type<TLOAD>, #pto.sync_op_type<TVEC>, <EVENT_ID1>]"
    )))
    assert "pto.set_flag[#pto.pipe<PIPE_MTE2>, #pto.pipe<PIPE_V>, #pto.event<EVENT_ID0>]" in printed
    assert (
        "!pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=64, v_row=16, v_col=?, blayout=row_major, "
        "slayout=none_box, fractal=512, pad=0>" in printed
    )
    assert "pto.tcvt ins(%s {rmode = #pto<round_mode FLOOR>} : " in printed
    assert "#pto.pipe_event_type<TLOAD>" in printed
    assert printed.startswith("module {\n  func.func @k() {\n")


def test_format_results():
    assert format_results(["%r#0", "%r#1"]) == "%r:2"
    assert format_results(["%a", "%b"]) == "%a, %b"
    assert format_results(["%r#1", "%r#0"]) == "%r#1, %r#0"
