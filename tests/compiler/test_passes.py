"""ConvertToSSA, InitMemRef, MemoryReuse, InsertSync, AllocateMemoryAddr."""

import pytest
from conftest import example

from pypto.enums import MemorySpace
from pypto.errors import CompileError
from pypto.ir import ForStmt, python_print
from pypto.ir.compiler import compile_program
from pypto.ir.verifier import verify
from pypto.ir.visitor import walk_stmts
from pypto.passes import PassManager
from pypto.passes.analysis import defined_vars, memref_of


def _vec_buffers(func):
    return {memref_of(v) for v in defined_vars(func) if memref_of(v) and memref_of(v).memory_space is MemorySpace.Vec}


def test_vector_add_reuse_and_sync():
    out = compile_program(example("tile_add").TileAdd).program
    k = out.get_function("add_kernel")
    assert len(_vec_buffers(k)) == 3  # tz2 reuses tx's buffer
    text = python_print(k)
    lines = [ln.strip() for ln in text.splitlines()]
    i_add = next(i for i, ln in enumerate(lines) if "block.add(" in ln)
    assert "sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V" in lines[i_add - 1]
    assert lines[i_add + 1] == "pl.system.bar_v()"
    i_store = next(i for i, ln in enumerate(lines) if "block.store(" in ln)
    assert "sync_dst(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3" in lines[i_store - 1]


def test_softmax_folds_seven_tiles_into_four_buffers():
    out = compile_program(example("row_softmax").RowSoftmax).program
    assert len(_vec_buffers(out.get_function("softmax_rows"))) == 4


def test_softmax_cross_iteration_war_is_synced():
    out = compile_program(example("row_softmax").RowSoftmax).program
    body = out.get_function("softmax_rows").body
    loop = next(s for s in walk_stmts(body) if isinstance(s, ForStmt))
    lines = [x.strip() for x in python_print(loop).strip().splitlines()]
    top = [x.strip() for x in python_print(body).strip().splitlines()]
    # the store (MTE3) reads a buffer the next iteration's V ops overwrite: a loop-carried flag, set
    # after the store, waited for right before the first V op of the next iteration (so that
    # iteration's load still overlaps the store), set once before the loop and consumed after it
    flag = "(set_pipe=pl.PipeType.MTE3, wait_pipe=pl.PipeType.V"
    first_v = next(i for i, x in enumerate(lines) if "pl.block.row_max" in x)
    store = next(i for i, x in enumerate(lines) if "pl.block.store" in x)
    assert any(x.startswith("pl.system.sync_dst" + flag) for x in lines[:first_v])
    assert any(x.startswith("pl.system.sync_src" + flag) for x in lines[store + 1:])
    assert any(x.startswith("pl.system.sync_src" + flag) for x in top[: top.index(lines[0])])
    assert any(x.startswith("pl.system.sync_dst" + flag) for x in top[top.index(lines[0]) + len(lines):])


def test_ptoas_strategy_has_no_sync():
    out = compile_program(example("row_softmax").RowSoftmax, "PTOAS").program
    assert "pl.system." not in python_print(out)


def test_addresses_are_aligned_and_verified():
    out = compile_program(example("matmul").Gemm).program
    verify(out, {"SSAForm", "HasMemRefs", "AllocatedMemoryAddr"})
    for v in defined_vars(out.get_function("gemm_kernel")):
        m = memref_of(v)
        if m is not None and m.memory_space is MemorySpace.Left:
            assert m.addr % 512 == 0


def test_convert_to_ssa_turns_reassignment_in_loop_into_iter_arg(tmp_path):
    src = tmp_path / "reassign.py"
    src.write_text(
        "import pypto.language as pl\n\n"
        "@pl.function(type=pl.FunctionType.Orchestration)\n"
        "def f(n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:\n"
        "    k = 0\n"
        "    for i in pl.range(n):\n"
        "        k = k + i\n"
        "    return k\n"
    )
    from conftest import load_module

    func = load_module(str(src)).f
    out = PassManager([__import__("pypto.passes", fromlist=["x"]).ConvertToSSAPass()]).run_passes(
        __import__("pypto.ir", fromlist=["Program"]).Program((func,), "P")
    )
    loop = next(s for s in walk_stmts(out.functions_list[0].body) if isinstance(s, ForStmt))
    assert len(loop.iter_args) == 1 and len(loop.return_vars) == 1
    verify(out, {"SSAForm", "TypeChecked"})


def test_memory_overflow_is_a_compile_error(tmp_path):
    src = tmp_path / "big.py"
    src.write_text(
        "import pypto.language as pl\n\n"
        "@pl.program\n"
        "class Big:\n"
        "    @pl.function(type=pl.FunctionType.InCore)\n"
        "    def k(self, a: pl.Tensor[[256, 256], pl.FP32], o: pl.Out[pl.Tensor[[256, 256], pl.FP32]]) -> pl.Tensor[[256, 256], pl.FP32]:\n"
        "        t = pl.load(a, [0, 0], [256, 256])\n"
        "        r = pl.store(t, [0, 0], o)\n"
        "        return r\n"
    )
    from conftest import load_module

    prog = load_module(str(src)).Big
    with pytest.raises(CompileError, match="memory space Vec overflows") as e:
        compile_program(prog)
    assert str(e.value).startswith(f"{src}:7:")


def test_dump_passes_writes_every_stage(tmp_path):
    from pypto import ir

    out = ir.compile(example("tile_add").TileAdd, output_dir=str(tmp_path), dump_passes=True)
    names = sorted(p.name for p in (tmp_path / "passes_dump").iterdir())
    assert names == [
        "00_frontend.py", "01_after_ConvertToSSA.py", "02_after_UnrollLoops.py", "03_after_SplitChunkedLoops.py",
        "04_after_InterchangeChunkLoops.py", "05_after_OutlineIncoreScopes.py",
        "06_after_OutlineTensorOps.py", "07_after_SplitCubeVector.py", "08_after_ExpandLibraryOps.py",
        "09_after_MaterializeTileViews.py", "10_after_ConvertTensorToBlockOps.py", "11_after_FuseLoops.py",
        "12_after_ExpandPower2.py", "13_after_InitMemRef.py", "14_after_SplitSections.py", "15_after_MemoryReuse.py",
        "16_after_InsertSync.py", "17_after_AllocateMemoryAddr.py",
    ]
    assert (tmp_path / "kernels" / "aiv" / "add_kernel.pto").exists()
    assert (tmp_path / "kernels" / "aiv" / "add_kernel.cpp").exists()
    assert out == str(tmp_path)
