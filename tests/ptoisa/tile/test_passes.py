"""The passes of seed 002 §8, each on a small program: what it rewrites and what it leaves."""

from __future__ import annotations

import numpy as np
import pytest

import pyptoemu
from ptoisa.isa.loader import load_isa
from ptoisa.machine import load_machine
from ptoisa.text import ast as A
from ptoisa.text.parser import parse_module
from ptoisa.text.printer import print_module
from ptoisa.tile.passes.bufferize import Bufferize
from ptoisa.tile.passes.canonicalize import Canonicalize
from ptoisa.tile.passes.common import PassContext
from ptoisa.tile.passes.events import InsertEvents
from ptoisa.tile.passes.swpipe import SoftwarePipeline
from ptoisa.tile.passes.tile_info import InferTileInfo
from ptoisa.tile.passes.views import CanonicalizeViews
from ptoisa.tile.pipeline import lower_tile_module

M = "pto.memref<64x64xf32>"
T = "tile<32x32xf32>"
SV = "pto.memref<32x32xf32, strided<[64, 1], offset: ?>>"


def _module(body: str, args: str = f"%x: {M}, %y: {M}, %z: {M}") -> A.Module:
    return parse_module(f"module {{ func.func @k({args}) {{\n{body}\nreturn }} }}", "p.pto")


def _ctx() -> PassContext:
    mach = load_machine()
    return PassContext(load_isa(machine=mach), mach)


def _run(module: A.Module, *passes) -> A.Function:
    ctx = _ctx()
    for p in passes:
        p.apply(module, ctx)
    return module.functions[0]


def _lines(fn: A.Function) -> list[str]:
    text = print_module(A.Module("p", [fn]))
    return [line.strip() for line in text.splitlines()[2:-3]]


ADD = f"""%c0 = pto.constant 0 : index
%a = pto.tile.load %x[%c0, %c0] : {M}, {T}
%b = pto.tile.load %y[%c0, %c0] : {M}, {T}
%s = pto.tile.add %a, %b : {T}
%e = pto.tile.exp %s : {T}
pto.tile.store %e, %z[%c0, %c0] : {M}, {T}"""


def test_canonicalize_folds_index_arithmetic_and_removes_dead_ops():
    fn = _run(_module(f"""%c2 = pto.constant 2 : index
%c16 = pto.constant 16 : index
%o = pto.muli %c2, %c16 : index
%unused = pto.addi %o, %c2 : index
%dead = pto.tile.load %x[%o, %o] : {M}, {T}
%a = pto.tile.load %x[%o, %o] : {M}, {T}
pto.tile.store %a, %y[%o, %o] : {M}, {T}"""), Canonicalize())
    assert _lines(fn) == [
        "%o = pto.constant 32 : index",
        f"%a = pto.tile.load %x[%o, %o] : {M}, {T}",
        f"pto.tile.store %a, %y[%o, %o] : {M}, {T}",
    ]


def test_views_are_rewritten_to_base_plus_offset():
    fn = _run(_module(f"""%c0 = pto.constant 0 : index
%c8 = pto.constant 8 : index
%sv = pto.memref.subview %x[%n, %c8] [32, 32] [1, 1] : {M} to {SV}
%a = pto.tile.load %sv[%c8, %c0] : {SV}, {T}
pto.tile.store %a, %y[%c0, %c0] : {M}, {T}""", f"%x: {M}, %y: {M}, %n: index"), CanonicalizeViews())
    assert _lines(fn) == [
        "%c0 = pto.constant 0 : index",
        "%c8 = pto.constant 8 : index",
        "%idx0 = pto.addi %n, %c8 : index",
        f"%a = pto.tile.load %x[%idx0, %c8] : {M}, {T}",
        f"pto.tile.store %a, %y[%c0, %c0] : {M}, {T}",
    ]


def test_tile_info_defaults_by_producer_and_by_use():
    fn = _run(_module("""%c0 = pto.constant 0 : index
%am = pto.tile.load %h[%c0, %c0] : pto.memref<16x16xf16>, tile<16x16xf16>
%l = pto.tile.mov.m2l %am : tile<16x16xf16> -> tile<16x16xf16>
%r = pto.tile.mov.m2r %am : tile<16x16xf16> -> tile<16x16xf16>
%c = pto.tile.matmul %l, %r : tile<16x16xf16>, tile<16x16xf16> -> tile<16x16xf32>
%v = pto.tile.mov.a2v %c : tile<16x16xf32> -> tile<16x16xf32>
%s = pto.tile.rowsum %v : tile<16x16xf32> -> tile<16x1xf32>
pto.tile.store %s, %o[%c0, %c0] : pto.memref<16x1xf32>, tile<16x1xf32>""",
                      "%h: pto.memref<16x16xf16>, %o: pto.memref<16x1xf32>"), InferTileInfo())
    got = {op.results[0]: (op.result_types[0].loc, op.result_types[0].layout)
           for op in fn.body.ops if op.results and isinstance(op.result_types[0], A.TileType)}
    assert got == {"%am": ("Mat", "Nz"), "%l": ("Left", "Zz"), "%r": ("Right", "Zn"), "%c": ("Acc", "Nz"),
                   "%v": ("Vec", "ND"), "%s": ("Vec", "DN")}
    assert fn.body.ops[-2].operand_types[0] == A.TileType((16, 1), "f32", "Vec", "DN")
    assert fn.body.ops[1].groups["valid"] == [16, 16]


def test_insert_events_gives_the_minimal_tokens():
    """load a (MTE2), load b (MTE2), add (V), exp (V), store (MTE3): the add needs only b's token
    (MTE2 completes in order, so a is done), the exp a V barrier token, the store the exp's."""
    fn = _run(_module(ADD), InferTileInfo(), InsertEvents())
    waits = {op.name: op.groups.get("wait") for op in fn.body.ops if op.name != "func.return"}
    assert waits == {"pto.constant": None, "pto.tile.load": None, "pto.tile.add": ["%e0"],
                     "pto.tile.exp": ["%e1"], "pto.tile.store": ["%e2"]}
    assert [str(t) for op in fn.body.ops for t in op.result_types if isinstance(t, A.EventType)] == [
        "!pto.event<producer = #pto.op<TLOAD>>", "!pto.event<producer = #pto.op<TADD>>",
        "!pto.event<producer = #pto.op<TEXP>>"]


def test_insert_events_orders_gm_accesses_to_the_same_memref():
    fn = _run(_module(f"""%c0 = pto.constant 0 : index
%a = pto.tile.load %x[%c0, %c0] : {M}, {T}
pto.tile.store %a, %y[%c0, %c0] : {M}, {T}
%b = pto.tile.load %y[%c0, %c0] : {M}, {T}
pto.tile.store %b, %z[%c0, %c0] : {M}, {T}"""), InferTileInfo(), InsertEvents())
    store1, load2 = fn.body.ops[2], fn.body.ops[3]
    assert load2.groups["wait"] == [store1.results[0]]  # the load reads what the store wrote (RAW on GM)


def test_bufferize_reuses_dead_buffers_within_capacity_and_orders_the_reuse():
    fn = _run(_module(ADD), InferTileInfo(), InsertEvents(), Bufferize())
    addr = {op.results[0]: op.attrs["addr"] for op in fn.body.ops if "addr" in op.attrs}
    assert addr == {"%a": 0, "%b": 4096, "%s": 8192, "%e": 0}  # %e reuses %a's bytes (dead after the add)
    add, exp = (next(op for op in fn.body.ops if op.name == n) for n in ("pto.tile.add", "pto.tile.exp"))
    assert exp.groups["wait"] == [add.results[1]]  # the add read %a: its token orders the reuse too


def test_lowering_turns_tokens_into_flags_and_v_barriers():
    mach = load_machine()
    low = lower_tile_module(_module(ADD), load_isa(machine=mach), mach)
    text = [op for op in low.functions[0].body.ops if op.name.startswith(("pto.t", "pto.set", "pto.wait", "pto.barrier"))]
    names = [op.name if "args" not in op.attrs else
             f"{op.name}[{', '.join(a.value for a in op.attrs['args'])}]" for op in text]
    assert names == ["pto.tload", "pto.tload", "pto.set_flag[PIPE_MTE2, PIPE_V, EVENT_ID0]",
                     "pto.wait_flag[PIPE_MTE2, PIPE_V, EVENT_ID0]", "pto.tadd", "pto.barrier", "pto.texp",
                     "pto.set_flag[PIPE_V, PIPE_MTE3, EVENT_ID0]", "pto.wait_flag[PIPE_V, PIPE_MTE3, EVENT_ID0]",
                     "pto.tstore"]


LOOP = """%c0 = pto.constant 0 : index
%c16 = pto.constant 16 : index
%c128 = pto.constant 128 : index
scf.for %r = %c0 to %c128 step %c16 {
  %sv = pto.memref.subview %x[%r, %c0] [16, 64] [1, 1] : pto.memref<128x64xf32> to pto.memref<16x64xf32, strided<[64, 1], offset: ?>>
  %t = pto.tile.load %sv[%c0, %c0] : pto.memref<16x64xf32, strided<[64, 1], offset: ?>>, tile<16x64xf32>
  %m = pto.tile.rowmax %t : tile<16x64xf32> -> tile<16x1xf32>
  %d = pto.tile.rowexpandsub %t, %m : tile<16x64xf32>, tile<16x1xf32> -> tile<16x64xf32>
  %e = pto.tile.exp %d : tile<16x64xf32>
  pto.tile.store %e, %y[%r, %c0] : pto.memref<128x64xf32>, tile<16x64xf32>
}"""
LOOP_ARGS = "%x: pto.memref<128x64xf32>, %y: pto.memref<128x64xf32>"


def test_software_pipeline_ping_pongs_the_loop():
    fn = _run(_module(LOOP, LOOP_ARGS), Canonicalize(), CanonicalizeViews(), InferTileInfo(), InsertEvents(),
              SoftwarePipeline(), Bufferize())
    loop = next(op for op in fn.body.ops if op.name == "scf.for")
    body = [op for op in loop.regions[0].ops if op.name.startswith("pto.tile.")]
    assert [op.name.removeprefix("pto.tile.") for op in body] == [
        "load", "load", "rowmax", "rowexpandsub", "exp", "rowmax", "rowexpandsub", "exp", "store", "store"]
    loads = [op for op in body if op.name == "pto.tile.load"]
    assert loads[0].attrs["addr"] != loads[1].attrs["addr"]  # ping and pong buffers
    step = next(op for op in fn.body.ops if op.results and op.results[0] == loop.operands[2])
    assert step.attrs["value"] == 32


@pytest.mark.parametrize("pipelined", [False, True])
def test_loop_runs_against_numpy_and_pipelining_saves_cycles(pipelined):
    x = np.random.default_rng(3).standard_normal((128, 64)).astype(np.float32)
    text = f"module {{ func.func @k({LOOP_ARGS}) {{\n{LOOP}\nreturn }} }}"
    r = pyptoemu.run(text, inputs={"arg0": x}, software_pipeline=pipelined)
    assert r.findings == []
    np.testing.assert_allclose(r.outputs["arg1"], np.exp(x - x.max(1, keepdims=True)), rtol=1e-5)
    base = pyptoemu.run(text, inputs={"arg0": x}).cycles
    if pipelined:
        assert r.cycles < 0.9 * base


def test_software_pipeline_leaves_an_odd_loop_with_a_note():
    notes: list[str] = []
    mach = load_machine()
    lower_tile_module(_module(LOOP.replace("%c128 = pto.constant 128", "%c128 = pto.constant 112"), LOOP_ARGS),
                      load_isa(machine=mach), mach, software_pipeline=True, notes=notes)
    assert notes == ["p.pto:5:1: loop not software-pipelined: trip count 7 is not even"]


BLOCK_SUM = """\
module attributes {pto.target = #pto.target<a3>} {
  func.func @block_sum(%x: pto.memref<128x64xf32>, %scale: f32, %y: pto.memref<32x64xf32>) {
    %c0 = pto.constant 0 : index
    %c1 = pto.constant 1 : index
    %c4 = pto.constant 4 : index
    %c32 = pto.constant 32 : index
    %zero = pto.constant 0.0 : f32
    %acc0 = pto.tile.expands %zero : f32 -> tile<32x64xf32>
    %acc, %n = scf.for %i = %c0 to %c4 step %c1 iter_args(%a = %acc0, %k = %c0) -> (tile<32x64xf32>, index) {
      %r = pto.muli %i, %c32 : index
      %t = pto.tile.load %x[%r, %c0] : pto.memref<128x64xf32>, tile<32x64xf32>
      %first = arith.cmpi eq, %i, %c0 : index
      %part = scf.if %first -> (tile<32x64xf32>) {
        %p0 = pto.tile.mov.v2v %t : tile<32x64xf32> -> tile<32x64xf32>
        scf.yield %p0 : tile<32x64xf32>
      } else {
        %p1 = pto.tile.muls %t, %scale : tile<32x64xf32>, f32 -> tile<32x64xf32>
        scf.yield %p1 : tile<32x64xf32>
      }
      %next = pto.tile.add %a, %part : tile<32x64xf32>
      %k1 = pto.addi %k, %c1 : index
      scf.yield %next, %k1 : tile<32x64xf32>, index
    }
    pto.tile.store %acc, %y[%c0, %c0] : pto.memref<32x64xf32>, tile<32x64xf32>
    return
  }
}
"""


def test_loop_carried_tiles_and_if_results_share_buffers_and_run_against_numpy():
    x = np.random.default_rng(4).standard_normal((128, 64)).astype(np.float32)
    r = pyptoemu.run(BLOCK_SUM, inputs={"arg0": x}, args={"arg1": 0.5})
    assert r.findings == []
    np.testing.assert_allclose(r.outputs["arg2"], x[:32] + 0.5 * (x[32:64] + x[64:96] + x[96:]), rtol=1e-5, atol=1e-6)
    fn = _run(parse_module(BLOCK_SUM), Canonicalize(), CanonicalizeViews(), InferTileInfo(), InsertEvents(),
              Bufferize())
    loop = next(op for op in fn.body.ops if op.name == "scf.for")
    acc0 = next(op for op in fn.body.ops if op.results == ["%acc0"])
    add = next(op for op in loop.regions[0].ops if op.name == "pto.tile.add")
    assert loop.attrs["addr"][0] == acc0.attrs["addr"] == add.attrs["addr"]  # init, iter_arg, yield, result


def test_a_carried_tile_read_after_its_replacement_is_yielded_through_a_copy():
    """The loop reads %a (the old sum) after computing %next (the new one): they cannot share the
    carried buffer, so bufferize yields a copy of %next (it refused the loop before)."""
    late = BLOCK_SUM.replace("%k1 = pto.addi %k, %c1 : index",
                             "%k1 = pto.addi %k, %c1 : index\n      %late = pto.tile.exp %a : tile<32x64xf32>\n"
                             "      pto.tile.store %late, %y[%c0, %c0] : pto.memref<32x64xf32>, tile<32x64xf32>")
    x = np.random.default_rng(5).standard_normal((128, 64)).astype(np.float32)
    r = pyptoemu.run(late, inputs={"arg0": x}, args={"arg1": 0.5})
    assert r.findings == []
    np.testing.assert_allclose(r.outputs["arg2"], x[:32] + 0.5 * (x[32:64] + x[64:96] + x[96:]), rtol=1e-5, atol=1e-6)
    mach = load_machine()
    lowered = lower_tile_module(parse_module(late, "b.pto"), load_isa(machine=mach), mach)
    loop = next(op for op in lowered.functions[0].body.ops if op.name == "scf.for")
    assert [op.name for op in loop.regions[0].ops if op.name == "pto.tmov"] == ["pto.tmov"]  # the copy


def test_an_if_branch_may_yield_the_tile_from_before_the_if():
    text = BLOCK_SUM.replace("""        %p0 = pto.tile.mov.v2v %t : tile<32x64xf32> -> tile<32x64xf32>
        scf.yield %p0 : tile<32x64xf32>""", "        scf.yield %t : tile<32x64xf32>")
    x = np.random.default_rng(7).standard_normal((128, 64)).astype(np.float32)
    r = pyptoemu.run(text, inputs={"arg0": x}, args={"arg1": 2.0})
    assert r.findings == []
    np.testing.assert_allclose(r.outputs["arg2"], x[:32] + 2.0 * (x[32:64] + x[64:96] + x[96:]), rtol=1e-5, atol=1e-5)
    late = text.replace("      %next = pto.tile.add %a, %part", "      %late = pto.tile.add %t, %part : tile<32x64xf32>\n"
                        "      %next = pto.tile.add %late, %part")
    mach = load_machine()
    with pytest.raises(Exception) as e:
        lower_tile_module(parse_module(late, "b.pto"), load_isa(machine=mach), mach)
    assert str(e.value) == "b.pto:13:7: error: 'scf.if' op yields %t, which is still used after the if; copy it first"


EDGE = """module {
  func.func @k(%x: pto.memref<40x32xf32>, %y: pto.memref<40x32xf32>, %rows: index) {
    %c0 = pto.constant 0 : index
    %c32 = pto.constant 32 : index
    %a = pto.tile.load %x[%c0, %c0] : pto.memref<40x32xf32>, tile<32x32xf32>
    %b = pto.tile.load %x[%c32, %c0] {valid = [VALID, 32]} : pto.memref<40x32xf32>, tile<32x32xf32>
    %a2 = pto.tile.exp %a : tile<32x32xf32>
    %b2 = pto.tile.exp %b {valid = [VALID, 32]} : tile<32x32xf32>
    pto.tile.store %a2, %y[%c0, %c0] : pto.memref<40x32xf32>, tile<32x32xf32>
    pto.tile.store %b2, %y[%c32, %c0] : pto.memref<40x32xf32>, tile<32x32xf32>
    return
  }
}"""


@pytest.mark.parametrize("valid", ["8", "%rows"])
def test_edge_tiles_move_only_their_valid_region(valid):
    """A 40-row memref in 32-row tiles: the second tile holds 8 valid rows (static or at run time);
    its window stays inside the memref and only those rows are loaded, computed and stored."""
    x = np.random.default_rng(8).standard_normal((40, 32)).astype(np.float32)
    r = pyptoemu.run(EDGE.replace("VALID", valid), inputs={"arg0": x}, args={"arg2": 8})
    assert r.findings == []
    np.testing.assert_allclose(r.outputs["arg1"].reshape(40, 32), np.exp(x), rtol=1e-6)


def test_a_window_beyond_the_memref_is_rejected_even_with_a_valid_region():
    mach = load_machine()
    with pytest.raises(Exception) as e:
        lower_tile_module(parse_module(EDGE.replace("VALID", "9"), "e.pto"), load_isa(machine=mach), mach)
    assert str(e.value) == "e.pto:6:5: error: 'pto.tile.load' op tile window [32, 41) of dim 0 exceeds the memref's 40"
