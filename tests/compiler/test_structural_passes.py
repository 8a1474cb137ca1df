"""UnrollLoops, OutlineIncoreScopes and ConvertTensorToBlockOps: the IR right after each pass, and the
programs run end to end (orchestration on the host, kernels on the emulator) against NumPy."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import needs_emulator, program_file

from pypto.enums import ForKind, FunctionType, MemorySpace, ParamDirection
from pypto.errors import CompileError
from pypto.ir import ForStmt, python_print
from pypto.ir import expr as E
from pypto.ir import stmt as St
from pypto.ir.compiler import compile_program
from pypto.ir.types import TileType
from pypto.ir.verifier import verify
from pypto.ir.visitor import walk, walk_stmts
from pypto.passes import (
    ConvertTensorToBlockOpsPass,
    ConvertToSSAPass,
    OutlineIncoreScopesPass,
    PassManager,
    UnrollLoopsPass,
)

P = program_file("structural")
STRATEGIES = ["Default", "PTOAS"]
FRONT = [ConvertToSSAPass(), UnrollLoopsPass(), OutlineIncoreScopesPass(), ConvertTensorToBlockOpsPass()]


def front(program, upto: int = 4):
    return PassManager(FRONT[:upto]).run_passes(program)


def rng_normal(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def calls(func, prefix: str) -> list[E.Call]:
    return [n for n in walk(func.body) if isinstance(n, E.Call) and n.op.name.startswith(prefix)]


def run_checked(program, args, strategy, entry=None):
    from pypto.runtime import run

    r = run(program, *args, entry=entry, strategy=strategy)
    bad = [f for f in r.findings if "race" in getattr(f, "kind", "") or getattr(f, "severity", "") == "error"]
    assert not bad, bad
    return r


def test_pipelines_list_the_new_passes():
    for strategy in STRATEGIES:
        names = PassManager.get_strategy(strategy).get_pass_names()
        assert names[:12] == ["ConvertToSSA", "UnrollLoops", "SplitChunkedLoops", "InterchangeChunkLoops",
                              "OutlineIncoreScopes", "OutlineTensorOps", "SplitCubeVector", "ExpandLibraryOps",
                              "MaterializeTileViews", "ConvertTensorToBlockOps", "FuseLoops", "ExpandPower2"]
        assert names[12:14] == ["InitMemRef", "SplitSections"]


# ----------------------------------------------------------------------------- UnrollLoops


def test_unroll_duplicates_the_body_with_constant_offsets():
    out = front(P.UnrollSum, 2)
    k = out.get_function("k")
    assert not [s for s in walk_stmts(k.body) if isinstance(s, ForStmt)]
    loads = calls(k, "block.load")
    assert [E.static_int(ld.args[1].elements[0]) for ld in loads] == [0, 16, 32, 48]
    adds = calls(k, "block.add")
    # each copy adds to what the previous copy produced
    assert adds[1].args[0] is next(s.var for s in walk_stmts(k.body) if isinstance(s, St.AssignStmt)
                                   and s.value is adds[0])
    verify(out, {"SSAForm", "TypeChecked"})


def test_unroll_nested_with_step():
    k = front(P.UnrollNested, 2).get_function("k")
    assert not [s for s in walk_stmts(k.body) if isinstance(s, ForStmt)]
    assert [E.static_int(ld.args[1].elements[0]) for ld in calls(k, "block.load")] == [0, 16, 32, 48]


def test_unroll_needs_constant_bounds(tmp_path):
    src = tmp_path / "dyn_unroll.py"
    src.write_text(
        "import pypto.language as pl\n\n"
        "@pl.function(type=pl.FunctionType.Orchestration)\n"
        "def f(n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:\n"
        "    k = 0\n"
        "    for i in pl.unroll(n):\n"
        "        k = k + i\n"
        "    return k\n"
    )
    from conftest import load_module

    from pypto.ir import Program

    with pytest.raises(CompileError, match="constant start, stop and step"):
        front(Program((load_module(str(src)).f,), "P"), 2)


def test_non_unroll_loops_are_kept():
    out = front(P.Chain200, 2)
    assert out.get_function("k") is not None
    kinds = {s.kind for f in out.functions_list for s in walk_stmts(f.body) if isinstance(s, ForStmt)}
    assert ForKind.Unroll not in kinds


@needs_emulator
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_unroll_end_to_end(strategy):
    x = rng_normal((64, 32), 1)
    r = run_checked(P.UnrollSum, (x,), strategy, entry="k")
    np.testing.assert_allclose(r.outputs[0], x.reshape(4, 16, 32).sum(0), rtol=1e-5, atol=1e-5)
    r = run_checked(P.UnrollNested, (x,), strategy, entry="k")
    np.testing.assert_allclose(r.outputs[0], x * 2, rtol=1e-6)


# ----------------------------------------------------------------------------- OutlineIncoreScopes


def test_outline_classifies_input_inout_output():
    out = front(P.ScopeInOut, 3)
    main = out.get_function("main")
    kernel = out.get_function("main_incore_0")
    assert main.type is FunctionType.Orchestration and kernel.type is FunctionType.InCore
    assert [p.name for p in kernel.params] == ["x", "acc", "y"]
    assert list(kernel.param_directions) == [ParamDirection.In, ParamDirection.InOut, ParamDirection.Out]
    assert len(kernel.return_types) == 2
    assert not [s for s in walk_stmts(main.body) if isinstance(s, St.ScopeStmt)]
    text = python_print(main)
    assert "main_incore_0(x, acc, y)" in text
    verify(out, {"SSAForm", "TypeChecked", "SplitIncoreOrch"})


def test_outline_names_count_per_parent_and_results_are_returned():
    out = front(P.ScopeTensorOpsInLoop, 3)
    kernel = out.get_function("main_incore_0")
    assert [p.name for p in kernel.params] == ["x", "y_1"]
    assert list(kernel.param_directions) == [ParamDirection.In, ParamDirection.In]
    last = list(walk_stmts(kernel.body))[-1]
    assert isinstance(last, St.ReturnStmt) and last.value[0].name == "z"


def test_outline_carries_a_tile_used_after_the_scope_through_ddr():
    # spec pypto-jit §4.1 (b): the tile is a task output held in DDR (was rejected before)
    prog = front(P.ScopeTileEscapes, 3)
    first, second = (f for f in prog.functions_list if f.type is FunctionType.InCore)
    assert first.param_directions[-1] is ParamDirection.Out and calls(first, "block.store")
    assert calls(second, "block.load")[0].args[0].name == first.params[-1].name


@needs_emulator
def test_outline_tile_carried_through_ddr_end_to_end():
    x = rng_normal((16, 16), 1)
    r = run_checked(P.ScopeTileEscapes, (x,), "Default")
    np.testing.assert_array_equal(r.outputs[0], x)


@needs_emulator
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_outline_end_to_end_input_inout_output(strategy):
    x, acc = rng_normal((32, 64), 2), rng_normal((32, 64), 3)
    want = acc + x  # before the run: acc is InOut, updated in place (spec pypto-jit §10.3)
    r = run_checked(P.ScopeInOut, (x, acc), strategy)
    np.testing.assert_allclose(r.outputs[0], want, rtol=1e-6)
    np.testing.assert_allclose(r.outputs[1], 2 * x, rtol=1e-6)
    assert r.launches == 1


@needs_emulator
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_outline_then_convert_end_to_end(strategy):
    x, y = rng_normal((64, 64), 4), rng_normal((64, 64), 5)
    r = run_checked(P.ScopeTensorOpsInLoop, (x, y), strategy)
    np.testing.assert_allclose(r.outputs[0], y + 4 * x, rtol=1e-5, atol=1e-6)
    assert r.launches == 2


# ----------------------------------------------------------------------------- ConvertTensorToBlockOps


def _valid(v) -> tuple:
    return tuple(E.static_int(d) for d in v.type.valid_shape)


def test_convert_tiles_100x96_add_with_a_tail():
    out = front(P.Add100x96)
    k = out.get_function("k")
    assert [p.name for p in k.params] == ["a", "b", "out_0"]
    assert k.param_directions[-1] is ParamDirection.Out
    assert not calls(k, "tensor.")
    loads = [s.var for s in walk_stmts(k.body) if isinstance(s, St.AssignStmt) and s.value.op.name == "block.load"]
    assert {tuple(E.static_int(d) for d in v.type.shape) for v in loads} == {(80, 96)}
    assert sorted({_valid(v) for v in loads}) == [(20, 96), (80, 96)]
    adds = [s.var for s in walk_stmts(k.body) if isinstance(s, St.AssignStmt) and s.value.op.name == "block.add"]
    assert sorted(_valid(v) for v in adds) == [(20, 96), (80, 96)]
    main = python_print(out.get_function("main"))
    assert "pl.tensor.create([100, 96], dtype=pl.FP32)" in main and "k(a, b, out_0)" in main
    verify(out, {"SSAForm", "TypeChecked", "SplitIncoreOrch", "IncoreBlockOps"})


def test_convert_loops_over_full_blocks():
    k = front(P.Chain200).get_function("k")
    loops = [s for s in walk_stmts(k.body) if isinstance(s, ForStmt)]
    assert len(loops) == 1 and E.static_int(loops[0].stop) == 2 and len(loops[0].iter_args) == 1
    names = [c.op.name for c in calls(k, "block.")]
    assert names.count("block.store") == 2 and "block.maximum" in names and "block.muls" in names


def test_convert_splits_columns_when_rows_are_too_wide():
    k = front(P.WideCast).get_function("k")
    loops = [s for s in walk_stmts(k.body) if isinstance(s, ForStmt)]
    assert len(loops) == 3  # rows (nested cols) and the row tail's cols
    tails = {_valid(s.var) for s in walk_stmts(k.body) if isinstance(s, St.AssignStmt)
             and s.value.op.name == "block.load"}
    assert tails == {(8, 1024), (8, 4), (4, 1024), (4, 4)}


def test_convert_softmax_uses_row_expand_and_padded_columns():
    k = front(P.TensorSoftmax).get_function("k")
    names = {c.op.name for c in calls(k, "block.")}
    assert {"block.row_max", "block.row_sum", "block.row_expand_sub", "block.row_expand_div", "block.exp"} <= names
    loads = [s.var for s in walk_stmts(k.body) if isinstance(s, St.AssignStmt) and s.value.op.name == "block.load"]
    assert all(E.static_int(v.type.shape[1]) == 104 and _valid(v)[1] == 100 for v in loads)


def test_convert_matmul_goes_through_the_cube_buffers():
    out = front(P.TensorMatmul)
    k = out.get_function("k")
    moves = calls(k, "block.move")
    assert [m.kwargs["target_memory"] for m in moves] == [MemorySpace.Left, MemorySpace.Right]
    assert [bool(m.kwargs.get("transpose")) for m in moves] == [False, True]
    assert calls(k, "block.matmul") and isinstance(calls(k, "block.matmul")[0].type, TileType)


def test_convert_rejects_tensor_ops_inside_kernel_loops(tmp_path):
    src = tmp_path / "loop_tensor.py"
    src.write_text(
        "import pypto.language as pl\n\n"
        "@pl.program\n"
        "class L:\n"
        "    @pl.function(type=pl.FunctionType.InCore)\n"
        "    def k(self, a: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:\n"
        "        for i in pl.range(2):\n"
        "            a = pl.add(a, a)\n"
        "        return a\n"
    )
    from conftest import load_module

    with pytest.raises(CompileError, match="inside a loop or if"):
        compile_program(load_module(str(src)).L)


@needs_emulator
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_convert_end_to_end(strategy):
    a, b = rng_normal((100, 96), 6), rng_normal((100, 96), 7)
    np.testing.assert_allclose(run_checked(P.Add100x96, (a, b), strategy).outputs[0], a + b, rtol=1e-6)
    a, b = rng_normal((200, 96), 8), rng_normal((200, 96), 9)
    got = run_checked(P.Chain200, (a, b), strategy).outputs[0]
    np.testing.assert_allclose(got, np.maximum((a + b) * np.float32(0.5), a), rtol=1e-6)
    a = rng_normal((20, 4100), 10)
    got = run_checked(P.WideCast, (a,), strategy).outputs[0]
    assert got.dtype == np.float16
    np.testing.assert_allclose(got.astype(np.float32), (a * 3).astype(np.float16).astype(np.float32), rtol=1e-3)


@needs_emulator
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_convert_reductions_and_matmul_end_to_end(strategy):
    x = rng_normal((100, 100), 11)
    e = np.exp(x - x.max(1, keepdims=True))
    got = run_checked(P.TensorSoftmax, (x,), strategy).outputs[0]
    np.testing.assert_allclose(got, e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-7)
    x, bias = rng_normal((40, 64), 12), rng_normal((40, 1), 13)
    t, y = run_checked(P.RowVectors, (x, bias), strategy).outputs
    np.testing.assert_allclose(t, x.sum(1, keepdims=True) + bias, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(y, bias * x, rtol=1e-6)
    a, b = rng_normal((64, 32), 14), rng_normal((64, 32), 15)
    got = run_checked(P.TensorMatmul, (a, b), strategy).outputs[0]
    np.testing.assert_allclose(got, a @ b.T, rtol=1e-4, atol=1e-4)


# ----------------------------------------------------------------------------- C++ transposed move


def test_cpp_transposed_move_reshapes_then_moves():
    from conftest import ROOT, load_module

    prog = load_module(f"{ROOT}/tests/compiler/user_programs/progs/transpose_mm.py").TransposeMM
    cpp = compile_program(prog).cpp["k"]
    lines = [ln.strip() for ln in cpp.splitlines()]
    i = next(i for i, ln in enumerate(lines) if ln.startswith("TRESHAPE("))
    assert lines[i + 1].startswith("TMOV(") and lines[i].split("(")[1].split(",")[0] in lines[i + 1]
    alias = next(ln for ln in lines if ln.startswith("using ") and "_T1Type" in ln)
    assert "TileType::Mat" in alias and ", 64, 32," in alias  # bt is [32, 64] in Mat: the view is [64, 32]
    plain = [ln for ln in lines if ln.startswith("TMOV(")]
    assert len(plain) == 2  # the untransposed Left move stays a plain TMOV
