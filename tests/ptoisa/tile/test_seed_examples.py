"""Seed 002's examples, verbatim (placeholders filled), parse, print back, verify and run."""

from __future__ import annotations

import numpy as np
import pytest

import pyptoemu
from ptoisa.errors import ParseError, VerifyError
from ptoisa.isa.loader import load_isa
from ptoisa.machine import load_machine
from ptoisa.text import ast as A
from ptoisa.text.parser import parse_module
from ptoisa.text.printer import print_module
from ptoisa.tile.passes.common import PassContext
from ptoisa.tile.passes.tile_info import InferTileInfo
from ptoisa.tile.verify import check_target, verify

from . import seed_examples as S

PROGRAMS = ["ASYNC_PROGRAM", "SEQUENTIAL_PROGRAM", "MATMUL_PROGRAM", "MOVES_PROGRAM"]


@pytest.mark.parametrize("name", PROGRAMS)
def test_seed_program_parses_prints_back_and_verifies(name):
    text = getattr(S, name)
    module = parse_module(text, f"{name}.pto")
    printed = print_module(module)
    assert print_module(parse_module(printed)) == printed
    verify(module, load_isa())
    verify(parse_module(printed), load_isa())


def test_seed_types_are_read_into_typed_nodes():
    m = parse_module(S.ASYNC_PROGRAM)
    fn = m.functions[0]
    assert fn.arg_types[0] == A.TileMemRefType((1024, 1024), "f32", "gm", "ND")
    assert m.attrs["pto.target"] == A.EnumAttr("target", "a3")
    sv = next(op for op in fn.body.ops if op.results == ["%sv0"])
    assert sv.groups == {"offsets": ["%0", "%1"], "sizes": [32, 32], "strides": [1, 1]}
    assert sv.result_types == [A.TileMemRefType((32, 32), "f32", strides=(1024, 1), offset=None)]
    add = next(op for op in fn.body.ops if op.name == "pto.tile.add")
    assert add.groups["wait"] == ["%e0", "%e1"]
    assert add.result_types == [A.TileType((32, 32), "f32"), A.EventType("TADD")]
    store = next(op for op in fn.body.ops if op.results == ["%e3"])
    assert store.operands == ["%t2", "%sv2"] and store.groups["indices"] == ["%c0", "%c0"]
    assert isinstance(store.operand_types[0], A.TileType) and store.result_types == [A.EventType("TSTORE_VEC")]


@pytest.mark.parametrize("scope", ["intra", "inter"])
def test_seed_event_type_with_every_parameter(scope):
    text = S.EVENT_TYPE.replace("intra|inter", scope)
    m = parse_module(f"func.func @f() {{\n %t, %e = pto.tile.load %m[%c0] : pto.memref<8xf16>, tile<8xf16>, {text}\n}}")
    assert m.functions[0].body.ops[0].result_types[1] == A.EventType("TLOAD", scope, 0)


def test_seed_tile_types_static_dynamic_and_fp8():
    m = parse_module("func.func @f(%a: tile<8xf16>, %b: tile<32x32xf32>, %c: tile<1x4x32x16xf8e4m3fn>, "
                     "%d: tile<?x16xf32, #pto.tile_info<loc=Vec, layout=ND>>) { return }")
    assert m.functions[0].arg_types == [
        A.TileType((8,), "f16"), A.TileType((32, 32), "f32"), A.TileType((1, 4, 32, 16), "f8E4M3FN"),
        A.TileType((None, 16), "f32", "Vec", "ND")]


def test_seed_load_attributes_loc_layout_and_dynamic_valid():
    m = parse_module(S.module(
        "%c0 = pto.constant 0 : index\n%n = pto.constant 16 : index\n"
        "%t = pto.tile.load %m[%c0, %c0] {loc = #pto.loc<Vec>, layout = #pto.layout<ND>, valid = [%n, 32]}\n"
        "    : pto.memref<32x32xf32>, tile<32x32xf32>", "%m: pto.memref<32x32xf32>"))
    op = m.functions[0].body.ops[2]
    assert op.attrs == {"loc": A.EnumAttr("loc", "Vec"), "layout": A.EnumAttr("layout", "ND")}
    assert op.groups["valid"] == ["%n", 32]


def test_unknown_tile_loc_is_a_located_parse_error():
    with pytest.raises(ParseError) as e:
        parse_module("func.func @f(%a: tile<8x8xf16, #pto.tile_info<loc=Cube, layout=ND>>) { return }", "x.pto")
    assert str(e.value) == "x.pto:1:51: unknown tile loc 'Cube' (expected one of Vec, Mat, Left, Right, Acc, Bias, Scale)"


def test_moves_program_is_rejected_by_target_legality_where_bias_overflows():
    """The §6.1 moves verify at IR level; a 32x32 f16 bias tile does not fit the 1 KiB bias table."""
    m = parse_module(S.MOVES_PROGRAM, "moves.pto")
    ctx = PassContext(load_isa(), load_machine())
    InferTileInfo().apply(m, ctx)  # (canonicalize would remove the unused moves)
    with pytest.raises(VerifyError) as e:
        check_target(m, ctx.isa, ctx.machine)
    assert str(e.value).startswith("moves.pto:13:1: error: 'pto.tile.mov.m2b' op tile tile<32x32xf16, "
                                   "#pto.tile_info<loc=Bias, layout=ND>> needs 2048 bytes but BT holds 1024")


def _window(arr, i, j):
    return arr[32 * i:32 * i + 32, 32 * j:32 * j + 32]


@pytest.mark.parametrize("name", ["ASYNC_PROGRAM", "SEQUENTIAL_PROGRAM"])
def test_seed_vector_add_runs_against_numpy_without_races(name):
    rng = np.random.default_rng(1)
    a, b = (rng.standard_normal((1024, 1024)).astype(np.float32) for _ in range(2))
    r = pyptoemu.run(getattr(S, name), inputs={"arg0": a, "arg1": b}, args={"arg3": 3, "arg4": 5})
    assert r.findings == [] and r.sync_mode == "asis"
    np.testing.assert_allclose(_window(r.outputs["arg2"].reshape(1024, 1024), 3, 5), _window(a + b, 3, 5), rtol=1e-6)


def test_seed_async_program_with_a_dropped_token_is_reported_by_the_race_detector():
    text = S.ASYNC_PROGRAM.replace("wait(%e0, %e1)", "wait(%e0)")
    r = pyptoemu.run(text, args={"arg3": 0, "arg4": 0}, races="warn")
    races = [f for f in r.findings if f.kind == "race"]
    assert races, r.findings
    assert "RAW" in races[0].message and "tload (MTE2" in races[0].message and "tadd (V" in races[0].message


def test_seed_matmul_acc_and_bias_run_against_numpy():
    rng = np.random.default_rng(2)
    a = rng.standard_normal((16, 32)).astype(np.float16)
    b = rng.standard_normal((32, 16)).astype(np.float16)
    bias = rng.standard_normal((1, 16)).astype(np.float32)
    r = pyptoemu.run(S.MATMUL_PROGRAM, inputs={"arg0": a, "arg1": b, "arg2": bias})
    ref = a.astype(np.float32) @ b.astype(np.float32)
    assert r.findings == []
    tol = 1e-3 * 32  # f16 inputs, f32 accumulation over K = 32
    np.testing.assert_allclose(r.outputs["arg3"], ref, atol=tol)
    np.testing.assert_allclose(r.outputs["arg4"], 2 * ref, atol=2 * tol)
    np.testing.assert_allclose(r.outputs["arg5"], ref + bias, atol=tol)
