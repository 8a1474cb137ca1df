"""Raising level-2 `.pto` (buffers written in place, explicit sync) to the tile-level SSA form."""

from __future__ import annotations

from pathlib import Path

import pytest

from ptoisa.errors import VerifyError
from ptoisa.isa.loader import load_isa
from ptoisa.text.parser import parse_file, parse_module
from ptoisa.text.printer import print_module
from ptoisa.tile.from_level2 import raise_module
from ptoisa.tile.verify import verify

ROOT = Path(__file__).resolve().parents[3]
VEC = "tile<32x32xf32, #pto.tile_info<loc=Vec, layout=ND>>"


def test_vadd_becomes_ssa_tiles_with_memref_arguments_and_no_sync():
    module = raise_module(parse_file(ROOT / "examples" / "vadd_32x32.pto"), load_isa())
    verify(module, load_isa())
    lines = [line.strip() for line in print_module(module).splitlines()]
    assert lines[1] == ("func.func @vadd(%arg0: pto.memref<32x32xf32>, %arg1: pto.memref<32x32xf32>, "
                        "%arg2: pto.memref<32x32xf32>) attributes {pto.entry, pto.kernel_kind = #pto.kernel_kind<vector>} {")
    assert lines[2:8] == [
        "%c0 = pto.constant 0 : index",
        f"%tx_v0 = pto.tile.load %arg0[%c0, %c0] : pto.memref<32x32xf32>, {VEC}",
        f"%ty_v1 = pto.tile.load %arg1[%c0, %c0] : pto.memref<32x32xf32>, {VEC}",
        f"%tz_v2 = pto.tile.add %tx_v0, %ty_v1 : {VEC}",
        f"pto.tile.store %tz_v2, %arg2[%c0, %c0] : pto.memref<32x32xf32>, {VEC}",
        "func.return",
    ]


def test_a_buffer_rewritten_in_a_loop_becomes_a_loop_carried_tile():
    tb = "!pto.tile_buf<vec, 16x32xf32>"
    text = f"""func.func @k(%p: !pto.ptr<f32>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %a0 = arith.constant 0 : i64
  %tv = pto.make_tensor_view %p, shape = [%c16, %c32], strides = [%c32, %c1] : !pto.tensor_view<?x?xf32>
  %pv = pto.partition_view %tv, offsets = [%c0, %c0], sizes = [%c16, %c32] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<16x32xf32>
  %t = pto.alloc_tile addr = %a0 : {tb}
  pto.tload ins(%pv : !pto.partition_tensor_view<16x32xf32>) outs(%t : {tb})
  scf.for %i = %c0 to %c4 step %c1 {{
    pto.barrier <PIPE_V>
    pto.texp ins(%t : {tb}) outs(%t : {tb})
  }}
  pto.tstore ins(%t : {tb}) outs(%pv : !pto.partition_tensor_view<16x32xf32>)
  return
}}"""
    module = raise_module(parse_module(text), load_isa())
    verify(module, load_isa())
    loop = next(op for op in module.functions[0].body.ops if op.name == "scf.for")
    body = loop.regions[0]
    assert loop.operands[3:] == ["%tt_v0"] and body.args == ["%i", "%carried1"]
    assert [op.name for op in body.ops] == ["pto.tile.exp", "scf.yield"]
    assert body.ops[0].operands == ["%carried1"] and body.ops[1].operands == [body.ops[0].results[0]]
    store = module.functions[0].body.ops[-2]
    assert store.name == "pto.tile.store" and store.operands[0] == loop.results[0]


def test_dynamic_gm_shapes_cannot_be_raised():
    text = """func.func @k(%p: !pto.ptr<f32>, %n: index) {
  %c1 = arith.constant 1 : index
  %tv = pto.make_tensor_view %p, shape = [%n, %n], strides = [%n, %c1] : !pto.tensor_view<?x?xf32>
  return
}"""
    with pytest.raises(VerifyError) as e:
        raise_module(parse_module(text, "d.pto"), load_isa())
    assert str(e.value) == ("d.pto:3:3: error: 'pto.make_tensor_view' op cannot be raised to the tile-level form: "
                            "GM shapes and strides must be constants")


def test_an_instruction_without_a_tile_level_form_is_a_located_error_not_a_crash():
    tb = "!pto.tile_buf<vec, 16x32xf32>"
    text = f"""func.func @k(%p: !pto.ptr<f32>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %tv = pto.make_tensor_view %p, shape = [%c16, %c32], strides = [%c32, %c1] : !pto.tensor_view<?x?xf32>
  %pv = pto.partition_view %tv, offsets = [%c0, %c0], sizes = [%c16, %c32] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<16x32xf32>
  %t = pto.alloc_tile : {tb}
  pto.tload ins(%pv : !pto.partition_tensor_view<16x32xf32>) outs(%t : {tb})
  pto.tprint ins(%t : {tb})
  return
}}"""
    with pytest.raises(VerifyError) as e:
        raise_module(parse_module(text, "p.pto"), load_isa())
    assert str(e.value) == ("p.pto:10:3: error: 'pto.tprint' op cannot be raised to the tile-level form: "
                            "it does not write exactly one tile")
