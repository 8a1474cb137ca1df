"""C++ and PTO code generation for every example program (deterministic, seed-001 structure), the files
ir.compile writes (pass dumps, memory report, orchestration, kernel_config) and the CLI."""

from __future__ import annotations

import os
import re

import pytest

from pypto import cli_compile, ir
from pypto.ir.compiler import compile_program
from tests.compiler.user_programs.helpers import HERE, STRATEGIES, load_file, prog

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
EXAMPLES = ["tile_add", "matmul", "row_softmax", "iter_args_if"]


def example(name: str) -> ir.Program:
    mod = load_file(os.path.join(ROOT, "examples", name + ".py"), tag="cg_")
    return next(v for v in vars(mod).values() if isinstance(v, ir.Program))


PROGRAMS = {f"example:{n}": (lambda n=n: example(n)) for n in EXAMPLES}
PROGRAMS.update({
    "four_outs": lambda: prog("orchestration", "FourOuts"),
    "inout": lambda: prog("orchestration", "InOutTwice"),
    "big": lambda: prog("shapes", "Big"),
    "tiny": lambda: prog("shapes", "Tiny"),
})


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_codegen_deterministic_and_seed_structure(name, strategy):
    p = PROGRAMS[name]()
    c1, c2 = compile_program(p, strategy), compile_program(PROGRAMS[name](), strategy)
    assert c1.cpp == c2.cpp and c1.pto == c2.pto
    assert c1.cpp, "no kernels generated"
    for kernel, text in c1.cpp.items():
        assert 'extern "C" __aicore__ __attribute__((always_inline)) void kernel_entry(__gm__ int64_t* args)' in text
        assert "GlobalTensor<" in text and re.search(r"TASSIGN\(\w+, 0x[0-9a-f]+\);", text), kernel
        assert "TLOAD(" in text and "TSTORE(" in text, kernel
        if strategy == "Default":
            assert "set_flag(PIPE_" in text and "wait_flag(PIPE_" in text, kernel
        else:
            assert "set_flag" not in text and "pipe_barrier" not in text, kernel
        assert text.count("{") == text.count("}"), kernel


def test_cpp_barrier_and_vec_sync_in_tile_add():
    text = compile_program(example("tile_add")).cpp["add_kernel"]
    lines = [ln.strip() for ln in text.splitlines()]
    i = lines.index("TADD(tz, tx, ty);")
    assert lines[i - 1] == "wait_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);" and lines[i + 1] == "pipe_barrier(PIPE_V);"
    assert "TSTORE(zGlobal, tz2);" in lines


def test_cpp_loops_with_iter_args_and_if_return_vars():
    text = compile_program(example("iter_args_if")).cpp["block_sum"]
    assert re.search(r"for \((u?int64_t) i = 0; i < 4; i \+= 1\) \{", text)
    assert "auto acc = " in text and "acc = acc_next;" in text
    assert "if ((i == 0)) {" in text and "} else {" in text and "part = scaled;" in text


def test_cpp_cube_kernel_structure():
    text = compile_program(example("matmul")).cpp["gemm_kernel"]
    for s in ("TileType::Left", "TileType::Right", "TileType::Acc", "TileType::Mat", "TMATMUL(acc, a0_l, b0_r);",
              "TMATMUL_ACC(acc2, acc, a1_l, b1_r);", "set_flag(PIPE_M, PIPE_FIX, EVENT_ID0);"):
        assert s in text, s


def test_dump_passes_files_and_contents(tmp_path):
    p = example("row_softmax")
    out = ir.compile(p, output_dir=str(tmp_path), dump_passes=True)
    dump = tmp_path / "passes_dump"
    names = sorted(f.name for f in dump.iterdir())
    assert names[0] == "00_frontend.py" and names[-1].endswith("_after_AllocateMemoryAddr.py")
    assert all(re.match(r"\d\d_after_\w+\.py$", n) for n in names[1:]), names
    assert (dump / "00_frontend.py").read_text() == ir.python_print(p)
    final = (dump / names[-1]).read_text()
    assert final == ir.python_print(compile_program(p).program)
    assert "pl.MemRef(pl.MemorySpace.Vec, 0," in final and "pl.system.sync_src(" in final
    sync = next(n for n in names if "InsertSync" in n)
    before = names[names.index(sync) - 1]
    assert "pl.system." not in (dump / before).read_text() and "pl.system." in (dump / sync).read_text()
    report = (tmp_path / "report" / "memory_after_AllocateMemoryAddr.txt").read_text()
    assert re.search(r"softmax_rows Vec: \d+ / 196608 bytes", report)
    assert out == str(tmp_path)


def test_dump_passes_ptoas_has_no_sync(tmp_path):
    ir.compile(example("tile_add"), output_dir=str(tmp_path), dump_passes=True, strategy="PTOAS")
    names = sorted(f.name for f in (tmp_path / "passes_dump").iterdir())
    assert not any("InsertSync" in n for n in names)
    assert "pl.system." not in (tmp_path / "passes_dump" / names[-1]).read_text()


def test_no_dump_when_disabled(tmp_path):
    ir.compile(example("tile_add"), output_dir=str(tmp_path), dump_passes=False)
    assert not (tmp_path / "passes_dump").exists()
    assert (tmp_path / "kernels" / "aiv" / "add_kernel.pto").exists()


def test_matmul_kernel_written_under_aic(tmp_path):
    ir.compile(example("matmul"), output_dir=str(tmp_path))
    assert (tmp_path / "kernels" / "aic" / "gemm_kernel.cpp").exists()
    assert not (tmp_path / "kernels" / "aiv").exists()


def test_orchestration_and_kernel_config_written(tmp_path):
    ir.compile(example("tile_add"), output_dir=str(tmp_path))
    orch = (tmp_path / "orchestration" / "main.cpp").read_text()
    assert "aicpu_orchestration_entry" in orch and "pto2_rt_submit_task" in orch
    assert "RUNTIME_CONFIG" in (tmp_path / "kernel_config.py").read_text()


def test_cli_compiles_every_program_of_a_file(tmp_path, capsys):
    path = os.path.join(HERE, "progs", "orchestration.py")
    assert cli_compile([path, "-o", str(tmp_path / "out")]) == 0
    for name, kernel in (("ViewReadScale", "scale"), ("InOutTwice", "acc_add"), ("FourOuts", "k4")):
        assert (tmp_path / "out" / name / "kernels" / "aiv" / f"{kernel}.cpp").exists()
