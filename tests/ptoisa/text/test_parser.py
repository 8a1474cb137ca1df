"""Parser tests: the main forms first, then every §7 variant, every Appendix A op, bad inputs and
robustness (random mutations raise only ParseError) and speed."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ptoisa.text.ast import (
    DenseAttr,
    EnumAttr,
    MemRefType,
    OpaqueAttr,
    OpaqueType,
    PartitionViewType,
    PtrType,
    ScalarType,
    SymbolRef,
    TensorViewType,
    TileBufType,
    UnitAttr,
)
from ptoisa.text.lexer import tokenize
from ptoisa.text.parser import parse_file, parse_module
from pyptoemu.errors import InputError, Loc, ParseError

from .op_lines import APPENDIX_A_NAMES, COL, OP_LINES, TB, wrap

HERE = Path(__file__).parent
DATA = HERE / "data"
CASES = sorted((HERE / "cases").glob("*.pto"))

TB_F32 = TileBufType("vec", "f32", 16, 64, 16, 64)


def ops_of(body: str):
    return parse_module(wrap(body)).functions[0].body.ops


def one(body: str):
    return ops_of(body)[0]


# ------------------------------------------------------------------------------------ smoke + examples


def test_smoke_appendix_b_softmax():
    m = parse_file(DATA / "appendix_b_softmax.pto")
    assert m.attrs == {"pto.target_arch": "a3"}
    (fn,) = m.functions
    assert fn.name == "row_softmax"
    assert fn.args == ["%in", "%out", "%n"]
    assert fn.arg_types == [PtrType("f32"), PtrType("f32"), ScalarType("index")]
    assert fn.attrs == {"pto.kernel_kind": EnumAttr("kernel_kind", "vector")}
    loop = fn.body.ops[10]
    assert loop.name == "scf.for"
    assert loop.operands == ["%c0", "%n", "%c16"]
    assert loop.regions[0].args == ["%r"]
    names = [op.name for op in loop.regions[0].ops]
    assert names[:3] == ["pto.partition_view", "pto.tload", "pto.trowmax"]
    rowmax = loop.regions[0].ops[2]
    assert rowmax.is_dps and rowmax.ins == ["%x", "%w"] and rowmax.outs == ["%m"]
    assert rowmax.in_types == [TB_F32, TB_F32]
    assert rowmax.out_types[0] == TileBufType("vec", "f32", 16, 1, 16, 1, blayout="col_major")
    assert fn.body.ops[-1].name == "func.return"


def test_appendix_b_mm16_compact_types_and_flags():
    m = parse_file(DATA / "appendix_b_mm16.pto")
    assert m.loc is None  # no module wrapper
    ops = m.functions[0].body.ops
    acc = next(op for op in ops if op.results == ["%acc"])
    assert acc.groups == {"addr": ["%c0_i64"]}
    assert acc.result_types == [
        TileBufType("acc", "f32", 16, 16, 16, 16, blayout="col_major", slayout="row_major", fractal=1024)
    ]
    flag = next(op for op in ops if op.name == "pto.set_flag")
    assert flag.attrs["args"] == [
        EnumAttr("pipe", "PIPE_MTE2"),
        EnumAttr("pipe", "PIPE_MTE1"),
        EnumAttr("event", "EVENT_ID0"),
    ]


def test_locations_point_at_first_result_or_op_name():
    m = parse_module("module {\n  func.func @f(%a: i32) {\n    %x = arith.addi %a, %a : i32\n"
                     "      pto.barrier <PIPE_V>\n    return\n  }\n}\n", "k.pto")
    fn = m.functions[0]
    assert fn.loc == Loc("k.pto", 2, 3)
    assert [op.loc for op in fn.body.ops] == [Loc("k.pto", 3, 5), Loc("k.pto", 4, 7), Loc("k.pto", 5, 5)]
    assert m.loc == Loc("k.pto", 1, 1)


@pytest.mark.parametrize("path", sorted((HERE.parents[2] / "examples").glob("*.pto")), ids=lambda p: p.name)
def test_repository_examples_parse(path):
    assert parse_file(path).functions


# ---------------------------------------------------------------------------------- module / functions


def test_module_attribute_variants():
    m = parse_module('module attributes {"pto.device-spec" = "Ascend910B1", pto.target_arch = "a5"} {\n}')
    assert m.attrs == {"pto.device-spec": "Ascend910B1", "pto.target_arch": "a5"}
    assert m.functions == []


def test_private_function_wrapped_args_attributes_next_line_results():
    m = parse_module(
        """
        func.func private @add1(%v: i32,
                                %w: i32) -> i32
            attributes {pto.entry, pto.kernel_kind = #pto.kernel_kind<cube>} {
          %r = arith.addi %v, %w : i32
          return %r : i32
        }
        func.func @two() -> (i32, index) {
          %a, %b = func.call @g() : () -> (i32, index)
          func.return %a, %b : i32, index
        }
        """
    )
    f, g = m.functions
    assert f.private and f.result_types == [ScalarType("i32")]
    assert f.attrs == {"pto.entry": UnitAttr(), "pto.kernel_kind": EnumAttr("kernel_kind", "cube")}
    ret = f.body.ops[-1]
    assert ret.name == "func.return" and ret.operands == ["%r"] and ret.operand_types == [ScalarType("i32")]
    assert not g.private and g.result_types == [ScalarType("i32"), ScalarType("index")]
    assert g.body.ops[0].results == ["%a", "%b"]


def test_call_with_and_without_prefix_and_signature_on_next_line():
    ops = ops_of(
        "func.call @f(%a, %b) : (!pto.ptr<f32>, !pto.ptr<f32>) -> ()\n"
        "%r = call @g(%v)\n    : (i32) -> i32"
    )
    assert [op.name for op in ops[:2]] == ["func.call", "func.call"]
    assert ops[0].attrs == {"callee": "f"} and ops[0].operands == ["%a", "%b"]
    assert ops[0].operand_types == [PtrType("f32")] * 2 and ops[0].result_types == []
    assert ops[1].results == ["%r"] and ops[1].result_types == [ScalarType("i32")]


def test_multi_result_defs_and_uses():
    ops = ops_of(
        "%r:2 = scf.if %p -> (index, i1) {\n scf.yield %a, %t : index, i1\n} else {\n"
        " scf.yield %b, %f : index, i1\n}\n"
        "%s = arith.addi %r#0, %r#1 : index"
    )
    assert ops[0].results == ["%r#0", "%r#1"]
    assert ops[1].operands == ["%r#0", "%r#1"]


# ------------------------------------------------------------------------------------------- arith/scf


def test_arith_constants():
    ops = ops_of(
        "%a = arith.constant 32 : index\n%b = arith.constant 8.83883476483184327e-02 : f32\n"
        "%c = arith.constant true\n%d = arith.constant -2.5e-01 : f16\n"
        "%e = arith.constant dense<[128, 64, 0, 0]> : vector<4xi16>\n%f = arith.constant dense<0> : vector<4xi16>\n"
        "%g = arith.constant 0xFF800000 : f32\n%h = arith.constant 1.0 : bf16\n%i = arith.constant -7 : i32"
    )
    vals = [op.attrs["value"] for op in ops[:9]]
    assert vals[0] == 32 and vals[1] == 8.83883476483184327e-02 and vals[2] is True and vals[3] == -0.25
    assert vals[4] == DenseAttr((128, 64, 0, 0)) and vals[5] == DenseAttr((0,))
    assert vals[6] == float("-inf") and vals[7] == 1.0 and vals[8] == -7
    assert ops[2].result_types == [ScalarType("i1")]
    assert ops[4].result_types == [OpaqueType("vector<4xi16>")]
    assert ops[7].result_types == [ScalarType("bf16")]


def test_arith_binary_cmp_cast_select():
    ops = ops_of(
        "%r = arith.muli %a, %b : index\n%p = arith.cmpi slt, %i, %n : index\n"
        "%x = arith.index_cast %v : i32 to index\n%s = arith.select %p, %a, %b : index\n"
        "%f = arith.mulf %a, %b fastmath<fast> : f32"
    )
    assert ops[0].operands == ["%a", "%b"] and ops[0].result_types == [ScalarType("index")]
    assert ops[1].attrs == {"predicate": "slt"} and ops[1].result_types == [ScalarType("i1")]
    assert ops[2].operand_types == [ScalarType("i32")] and ops[2].result_types == [ScalarType("index")]
    assert ops[3].operands == ["%p", "%a", "%b"] and ops[3].result_types == [ScalarType("index")]
    assert ops[4].attrs == {"fastmath": OpaqueAttr("fastmath<fast>")}


def test_scf_for_iter_args():
    (loop,) = ops_of(
        "%done = scf.for %i = %c0 to %c4 step %c1 iter_args(%alive = %true) -> (i1) {\n"
        "  %n = arith.xori %alive, %true : i1\n  scf.yield %n : i1\n}"
    )[:1]
    assert loop.operands == ["%c0", "%c4", "%c1", "%true"]
    assert loop.regions[0].args == ["%i", "%alive"]
    assert loop.regions[0].arg_types == [ScalarType("index"), ScalarType("i1")]
    assert loop.result_types == [ScalarType("i1")] and loop.results == ["%done"]


def test_scf_if_empty_else_and_yield_without_operands():
    op = one("scf.if %c {\n  pto.barrier <PIPE_V>\n} else {\n}\nscf.for %i = %a to %b step %c {\n scf.yield\n}")
    assert op.operands == ["%c"] and len(op.regions) == 2 and op.regions[1].ops == []
    loop = ops_of("scf.for %i = %a to %b step %c {\n scf.yield\n}")[0]
    assert loop.regions[0].ops[0].name == "scf.yield" and loop.regions[0].ops[0].operands == []


def test_scf_while():
    (w,) = ops_of(
        "%w:2 = scf.while (%i = %c0, %go = %true) : (index, i1) -> (index, i1) {\n"
        "  %lt = arith.cmpi slt, %i, %c4 : index\n  scf.condition(%lt) %i, %go : index, i1\n"
        "} do {\n^bb0(%i2: index, %go2: i1):\n  scf.yield %i2, %go2 : index, i1\n}"
    )[:1]
    before, after = w.regions
    assert w.operands == ["%c0", "%true"] and w.results == ["%w#0", "%w#1"]
    assert before.args == ["%i", "%go"] and after.args == ["%i2", "%go2"]
    cond = before.ops[1]
    assert cond.name == "scf.condition" and cond.operands == ["%lt", "%i", "%go"]


def test_memref_ops_and_types():
    ops = ops_of(
        "%m = memref.alloc() : memref<16x16xf16, #pto.address_space<vec>>\n"
        "memref.dealloc %m : memref<16x16xf16, #pto.address_space<vec>>\n"
        "%v = memref.reinterpret_cast %g to offset: [%o], sizes: [%a, 16], strides: [%s, %c1] "
        "{layout = #pto.layout<nd>} : memref<16xi16, #pto.address_space<gm>> to "
        "memref<1x16xi16, strided<[16, 1], offset: ?>, #pto.address_space<gm>>"
    )
    assert ops[0].result_types == [MemRefType((16, 16), "f16", "vec")]
    assert ops[1].operands == ["%m"]
    cast = ops[2]
    assert cast.groups == {"offsets": ["%o"], "sizes": ["%a", 16], "strides": ["%s", "%c1"]}
    assert cast.result_types == [MemRefType((1, 16), "i16", "gm", (16, 1), None)]
    m = parse_module("func.func @f(%a: memref<32x32xf32, strided<[?, 1], offset: ?>>, %b: memref<256xi64>) {\n}")
    assert m.functions[0].arg_types == [
        MemRefType((32, 32), "f32", "gm", (None, 1), None),
        MemRefType((256,), "i64"),
    ]


# ---------------------------------------------------------------------------------------------- types


@pytest.mark.parametrize(
    "text, expected",
    [
        (TB, TB_F32),
        (
            (
                "!pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=64, blayout=row_major, v_row=16, v_col=64, "
                "slayout=none_box, fractal=512, pad=0>"
            ),
            TB_F32,
        ),
        ("!pto.tile_buf<vec, 16x64xf32, valid=16x?>", TileBufType("vec", "f32", 16, 64, 16, None)),
        ("!pto.tile_buf<vec, 16x64xf32, valid=?x?>", TileBufType("vec", "f32", 16, 64, None, None)),
        ("!pto.tile_buf<vec, 16x64xf32, valid=8x32>", TileBufType("vec", "f32", 16, 64, 8, 32)),
        ("!pto.tile_buf<vec, 16x64xf32, valid=?x32, compact=2>",
         TileBufType("vec", "f32", 16, 64, None, 32, compact=2)),
        (
            (
                "!pto.tile_buf<loc=vec, dtype=bf16, rows=16, cols=64, v_row=-1, v_col=?, blayout=\"col_major\", "
                "slayout=\"row_major\", fractal=512, pad=3, compact=1>"
            ),
            TileBufType("vec", "bf16", 16, 64, None, None, "col_major", "row_major", 512, 3, 1),
        ),
        ("!pto.tile_buf<32x64xf32, #pto.address_space<vec>>", TileBufType("vec", "f32", 32, 64, 32, 64)),
        (
            "!pto.tile_buf<32x64xf16, strided<[32, 1], offset: [?, ?]>, #pto.address_space<mat>>",
            TileBufType("mat", "f16", 32, 64, 32, 64),
        ),
        ("!pto.tile_buf<vec, 16x64xf8E4M3FN>", TileBufType("vec", "f8E4M3FN", 16, 64, 16, 64)),
        ("!pto.tile_buf<vec, 16x64xui8, pad=zero>", TileBufType("vec", "ui8", 16, 64, 16, 64, pad=1)),
        ("!pto.tensor_view<?x?xf32>", TensorViewType((None, None), "f32")),
        ("!pto.tensor_view<1x1x16x16x16xf32>", TensorViewType((1, 1, 16, 16, 16), "f32")),
        ("!pto.partition_tensor_view<32xf32>", PartitionViewType((32,), "f32")),
        ("!pto.tile_view<32x32xf32>", PartitionViewType((32, 32), "f32")),
        ("!pto.ptr<bf16>", PtrType("bf16")),
        ("!pto.eventid_array<4>", OpaqueType("!pto.eventid_array<4>")),
        ("!pto.pipe", OpaqueType("!pto.pipe")),
        ("vector<4xi16>", OpaqueType("vector<4xi16>")),
        ("i1", ScalarType("i1")),
        ("ui16", ScalarType("ui16")),
    ],
)
def test_type_forms(text, expected):
    op = one(f"pto.set_validshape %t, %r, %c : {text}")
    assert op.operand_types == [expected]


def test_short_tile_and_ptr_types():
    op = one(
        "pto.tmov ins(%a : <loc=left, dtype=f32, rows=32, cols=32, v_row=32, v_col=32, blayout=col_major, "
        "slayout=row_major, fractal=512, pad=0>) outs(%b : <mat, 32x32xf32>)"
    )
    assert op.in_types[0] == TileBufType("left", "f32", 32, 32, 32, 32, "col_major", "row_major")
    assert op.out_types[0] == TileBufType("mat", "f32", 32, 32, 32, 32)
    op = one("%q = pto.addptr %p, %o : <f32> -> <f32>")
    assert op.operand_types == [PtrType("f32")] and op.result_types == [PtrType("f32")]


def test_legacy_rank_only_tensor_view_tolerance():
    ops = ops_of(
        "%tv = pto.make_tensor_view %p, shape = [%m, %n], strides = [%n, %c1] : !pto.tensor_view<2xf32>\n"
        "%one = pto.make_tensor_view %p, shape = [%m], strides = [%c1] : !pto.tensor_view<2xf32>\n"
        "%v = pto.subview %tv, offsets = [%a, %b], sizes = [32, 32] : !pto.tensor_view<2xf32> "
        "-> !pto.tile_view<32x32xf32>"
    )
    assert ops[0].result_types == [TensorViewType((None, None), "f32")]
    assert ops[1].result_types == [TensorViewType((2,), "f32")]  # counts agree: read literally
    assert ops[2].operand_types == [TensorViewType((None, None), "f32")]
    assert ops[2].groups == {"offsets": ["%a", "%b"], "sizes": [32, 32]}
    assert ops[2].result_types == [PartitionViewType((32, 32), "f32")]


# -------------------------------------------------------------------------------------------- pto ops


def test_make_tensor_view_spacing_and_missing_comma():
    ops = ops_of(
        "%a = pto.make_tensor_view %p, shape=[%m, %n] strides = [%n, %c1] {layout = #pto.layout<dn>}: "
        "!pto.tensor_view<?x?xf16>\n"
        "%b = pto.make_tensor_view %p, shape = [%m, %n], strides = [%n, %c1] : !pto.tensor_view<?x?xf16>"
    )
    for op in ops[:2]:
        assert op.operands == ["%p"]
        assert op.groups == {"shape": ["%m", "%n"], "strides": ["%n", "%c1"]}
        assert op.result_types == [TensorViewType((None, None), "f16")]
    assert ops[0].attrs == {"layout": EnumAttr("layout", "dn")}


def test_alloc_tile_clauses():
    op = one(OP_LINES["alloc_tile"])
    assert op.groups == {"addr": ["%c1056_i64"], "valid_row": ["%c8"], "valid_col": ["%n"]}
    assert op.result_types[0].v_row is None and op.operands == []


def test_dps_inline_attrs_and_trailing_dict():
    op = one(OP_LINES["tcvt"])
    assert op.ins == ["%s"] and op.attrs == {
        "rmode": EnumAttr("round_mode", "ROUND"),
        "sat_mode": EnumAttr("saturation_mode", "OFF"),
    }
    op = one(OP_LINES["tstore"])
    assert op.ins == ["%acc", "%q"] and op.in_types[1] == ScalarType("i64")
    assert op.attrs["atomicType"] == EnumAttr("atomic_type", "atomic_add")


def test_dps_unknown_op_is_generic():
    op = one(f"pto.tfoo ins(%a, %b : {TB}, f32) outs(%d : {TB}) {{k = 3}}")
    assert op.name == "pto.tfoo" and op.is_dps and op.ins == ["%a", "%b"] and op.attrs == {"k": 3}


def test_textract_bracket_form():
    op = one(f"pto.textract ins(%src[%r, %c] : {TB}) outs(%d : {TB})")
    assert op.ins == ["%src", "%r", "%c"]
    assert op.in_types == [TB_F32, ScalarType("index"), ScalarType("index")]


def test_treshape_both_forms():
    ssa = one(f"%r = pto.treshape %t : {COL} -> !pto.tile_buf<vec, 1x16xf32>")
    assert ssa.operands == ["%t"] and ssa.result_types == [TileBufType("vec", "f32", 1, 16, 1, 16)]
    dps = one(f"pto.treshape ins(%s : {COL}) outs(%d : !pto.tile_buf<vec, 1x16xf32>)")
    assert dps.is_dps and dps.ins == ["%s"] and dps.outs == ["%d"]


def test_tmrgsort_outs_with_three_values_and_row_reduction_without_tmp():
    op = one(f"pto.tmrgsort ins(%a, %b : {TB}, {TB}) outs(%d, %tmp, %exec : {TB}, {TB}, vector<4xi16>)")
    assert op.outs == ["%d", "%tmp", "%exec"]
    op = one(f"pto.trowmax ins(%src : {TB}) outs(%dst : {COL})")
    assert op.ins == ["%src"]


def test_tgather_mask_forms():
    op = one(OP_LINES["tgather"])
    assert op.ins == ["%src"] and op.attrs == {"maskPattern": EnumAttr("mask_pattern", "P0101")}
    op = one(f"pto.tgather ins(%src : {TB}) outs(%d : {TB}) maskPattern = #pto.mask_pattern<P1010>")
    assert op.attrs == {"maskPattern": EnumAttr("mask_pattern", "P1010")}
    op = one(
        f"pto.tgather ins(%src, %k, %tmp : {TB}, f16, {TB}) outs(%d, %cnt : {TB}, {TB}) "
        "{cmpMode = #pto<cmp gt>, offset = 7 : i32}"
    )
    assert op.attrs == {"cmpMode": EnumAttr("cmp", "gt"), "offset": 7}


def test_tload_padding_clauses_and_tensor_result():
    op = one(
        f"pto.tload ins(%pv : !pto.partition_tensor_view<16x64xf32>) outs(%t : {TB}) "
        "pad_mode = #pto.padmode<PadValue> pad_value = %v : f32 left_padding_num = %n : index "
        "init_out_buffer = true -> tensor<16x64xf32>"
    )
    assert op.attrs == {"pad_mode": EnumAttr("padmode", "PadValue"), "init_out_buffer": True}
    assert op.groups == {"pad_value": ["%v"], "left_padding_num": ["%n"]}
    assert op.group_types == {"pad_value": [ScalarType("f32")], "left_padding_num": [ScalarType("index")]}
    assert op.result_types == [OpaqueType("tensor<16x64xf32>")] and op.results == []


def test_tgetval_outs_colon_type_and_print_format():
    op = one(OP_LINES["tgetval"])
    assert op.ins == ["%t", "%off"] and op.outs == [] and op.result_types == [ScalarType("f16")]
    op = one(OP_LINES["print"])
    assert op.ins == ["%v"] and op.attrs == {"format": "%+08.3f"}


def test_sync_ops():
    ops = ops_of(
        "pto.set_flag [<PIPE_MTE2>, <PIPE_V>, <EVENT_ID0>]\n"
        "pto.set_flag_dyn [#pto.pipe<PIPE_MTE2>, #pto.pipe<PIPE_MTE3>, %id]\n"
        "pto.barrier <PIPE_ALL>\npto.barrier #pto.pipe<PIPE_V>\n"
        "pto.record_event[#pto.sync_op_type<TLOAD>, #pto.sync_op_type<TMOV_M2L>, <EVENT_ID0>]\n"
        "pto.barrier_sync [<TVEC>]\n"
        "pto.sync.set #pto.pipe<PIPE_M>, 3\npto.sync.set <PIPE_MTE3>, %id\n"
        "pto.get_buf [#pto.pipe_event_type<TLOAD>, 0] {mode = 0 : i32}"
    )
    assert ops[0].attrs["args"][2] == EnumAttr("event", "EVENT_ID0")
    assert ops[1].operands == ["%id"] and len(ops[1].attrs["args"]) == 2
    assert ops[2].attrs == {"pipe": EnumAttr("pipe", "PIPE_ALL")}
    assert ops[3].attrs == {"pipe": EnumAttr("pipe", "PIPE_V")}
    assert ops[4].attrs["args"] == [
        EnumAttr("pipe_event_type", "TLOAD"),
        EnumAttr("pipe_event_type", "TMOV_M2L"),
        EnumAttr("event", "EVENT_ID0"),
    ]
    assert ops[5].attrs["args"] == [EnumAttr("pipe_event_type", "TVEC")]
    assert ops[6].attrs == {"pipe": EnumAttr("pipe", "PIPE_M"), "id": 3}
    assert ops[7].operands == ["%id"] and "id" not in ops[7].attrs
    assert ops[8].attrs == {"args": [EnumAttr("pipe_event_type", "TLOAD"), 0], "mode": 0}


def test_fifo_small_grammars():
    op = one(OP_LINES["reserve_buffer"])
    assert op.attrs == {
        "name": "c2v_fifo", "size": 8192, "location": EnumAttr("address_space", "vec"), "auto": True,
    }
    assert op.result_types == [ScalarType("i32")]
    op = one(OP_LINES["import_reserved_buffer"])
    assert op.attrs["peer_func"] == SymbolRef("vec_kernel")
    op = one(OP_LINES["aic_initialize_pipe"])
    assert op.groups == {"c2v_consumer_buf": ["%a"], "v2c_consumer_buf": ["%b"]}
    assert op.attrs == {"dir_mask": 3, "slot_size": 1024}
    op = one(OP_LINES["tpop_from_aic"])
    assert op.operands == ["%vr", "%vc"] and op.attrs == {"split": 2} and len(op.result_types) == 1
    op = one(OP_LINES["tpush"])
    assert op.operands == ["%t", "%p"] and op.operand_types[1] == OpaqueType("!pto.pipe")
    op = one(OP_LINES["initialize_l2g2l_pipe"])
    assert op.operands == ["%gm", "%local"] and op.operand_types[1] == ScalarType("i32")
    op = one(OP_LINES["tfree_from_aic"])
    assert op.attrs == {"split": 1} and op.operands == []
    op = one(OP_LINES["subset"])
    assert op.operands == ["%t", "%r", "%c"] and op.groups == {"sizes": [16, 16]}
    op = one(OP_LINES["eventid_array_set"])
    assert op.operands == ["%a", "%i", "%v"]


def test_section_region():
    op = one("pto.section.cube {\n  %x = pto.get_block_idx\n  pto.barrier <PIPE_M>\n}")
    assert op.name == "pto.section.cube" and [o.name for o in op.regions[0].ops] == [
        "pto.get_block_idx", "pto.barrier",
    ]


def test_ops_without_operands_stop_at_next_statement():
    ops = ops_of("%b = pto.get_block_idx\n%n = pto.get_block_num\npto.trap\n%c = arith.constant 1 : i64")
    assert [op.name for op in ops] == [
        "pto.get_block_idx", "pto.get_block_num", "pto.trap", "arith.constant", "func.return",
    ]
    assert all(op.operands == [] for op in ops[:3])


def test_generic_form():
    op = one(
        '"pto.tmov"(%acc, %out, %q) <{operandSegmentSizes = array<i32: 1, 1, 0, 1>,\n'
        "    reluPreMode = #pto<relu_pre_mode normal_relu>}>\n"
        f"    : ({TB}, {TB}, i64) -> ()"
    )
    assert op.generic and op.name == "pto.tmov" and op.operands == ["%acc", "%out", "%q"]
    assert op.attrs["reluPreMode"] == EnumAttr("relu_pre_mode", "normal_relu")
    assert op.attrs["operandSegmentSizes"] == OpaqueAttr("array<i32: 1, 1, 0, 1>")
    assert op.operand_types == [TB_F32, TB_F32, ScalarType("i64")] and op.result_types == []


def test_comments_run_check_lines_and_glued_tokens():
    m = parse_module(
        "// RUN: ptoas %s | FileCheck %s\n// Licensed under ...\n\nmodule {\n// CHECK: func\n"
        "  func.func @k(%a: i32) {\n    pto.tfree_from_aic{split = 1}\n    pto.set_flag[<PIPE_S>, <PIPE_V>, "
        "<EVENT_ID1>] // trailing\n    return\n  }\n}\n"
    )
    ops = m.functions[0].body.ops
    assert [o.name for o in ops] == ["pto.tfree_from_aic", "pto.set_flag", "func.return"]


@pytest.mark.parametrize("name", APPENDIX_A_NAMES)
def test_every_appendix_a_op_parses(name):
    op = one(OP_LINES[name])
    assert op.name == f"pto.{name}"
    if "ins(" in OP_LINES[name]:
        assert op.is_dps and (op.ins or op.outs)


def test_dtype_names_kept_as_written():
    for dt in ("f32", "bf16", "i1", "ui8", "f8E4M3FN", "f8E5M2", "i64"):
        op = one(f"pto.set_validshape %t, %r, %c : !pto.tile_buf<vec, 16x64x{dt}>")
        assert op.operand_types[0].dtype == dt


# --------------------------------------------------------------------------------------------- errors


def _case_id(path: Path) -> str:
    return path.stem


@pytest.mark.parametrize("path", CASES, ids=_case_id)
def test_bad_input_cases(path):
    text = path.read_text()
    header = text.splitlines()[0]
    assert header.startswith("// error: "), f"{path.name}: first line must be '// error: L:C: message'"
    where, expected = header[len("// error: "):].split(": ", 1)
    line, col = (int(x) for x in where.split(":"))
    with pytest.raises(ParseError) as info:
        parse_module(text, path.name)
    err = info.value
    assert expected in err.message
    assert (err.loc.line, err.loc.col) == (line, col), str(err)
    assert str(err).startswith(f"{path.name}:{line}:{col}: ")
    assert "pyptoemu" not in str(err) and "Traceback" not in str(err)


def test_bad_cases_exist():
    assert len(CASES) >= 12


def test_missing_file_is_input_error(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        parse_file(tmp_path / "nope.pto")
    with pytest.raises(InputError, match="cannot read"):
        parse_file(tmp_path)


# ------------------------------------------------------------------------------------- robustness


_SEED = (DATA / "appendix_b_mm16.pto").read_text() + "\n" + "\n".join(
    [
        "// extra",
        "func.func @x(%a: i32) {",
        *(OP_LINES[n] for n in ("tcvt", "tgather", "aic_initialize_pipe", "subset", "sync.set", "tload")),
        '"pto.tmov"(%a, %b) <{k = array<i32: 1, 0>}> : (i32, i32) -> ()',
        "%w = scf.while (%i = %c0) : (index) -> (index) {",
        "  scf.condition(%t) %i : index",
        "} do {",
        "^bb0(%j: index):",
        "  scf.yield %j : index",
        "}",
        "return",
        "}",
    ]
)
_SEED_TOKENS = [(t.start, t.end) for t in tokenize(_SEED)[:-1]]


def _mutate(ops: list[tuple[int, int, int]]) -> str:
    spans = list(_SEED_TOKENS)
    pieces = [_SEED[s:e] for s, e in spans]
    for kind, i, j in ops:
        if not pieces:
            break
        i %= len(pieces)
        if kind == 0:
            del pieces[i]
        elif kind == 1:
            pieces.insert(i, pieces[i])
        elif kind == 2:
            pieces[i], pieces[j % len(pieces)] = pieces[j % len(pieces)], pieces[i]
        else:
            pieces = pieces[:i]
    return " ".join(pieces)


@settings(derandomize=True, deadline=None, max_examples=200)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 10**6), st.integers(0, 10**6)), min_size=1,
                max_size=6))
def test_random_mutations_raise_only_parse_error(mutations):
    text = _mutate(mutations)
    try:
        parse_module(text, "fuzz.pto")
    except ParseError:
        pass


@settings(derandomize=True, deadline=None, max_examples=100)
@given(st.integers(0, len(_SEED)))
def test_truncated_text_raises_only_parse_error(cut):
    try:
        parse_module(_SEED[:cut], "fuzz.pto")
    except ParseError:
        pass


def test_mutation_seed_parses():
    parse_module(_SEED)


# ------------------------------------------------------------------------------------------------ speed


def test_thousand_ops_parse_into_one_flat_body():
    # Parse speed is measured by benchmarks/, not asserted here (a timed unit test fails on a busy machine).
    lines = []
    for i in range(250):
        lines.append(f"%pv{i} = pto.partition_view %tv, offsets = [%c0, %c0], sizes = [%c16, %c64] : "
                     "!pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<16x64xf32>")
        lines.append(f"pto.tload ins(%pv{i} : !pto.partition_tensor_view<16x64xf32>) outs(%x : {TB})")
        lines.append(f"pto.trowexpandsub ins(%x, %m : {TB}, {COL}) outs(%x : {TB})")
        lines.append(f"%c{i} = arith.constant {i} : index")
    text = wrap("\n".join(lines))
    m = parse_module(text)
    assert len(m.functions[0].body.ops) == 1001
