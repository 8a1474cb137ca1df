"""``pypto.cli_compile``: compile every @pl.program of a file."""

import os

from conftest import EXAMPLES, HERE

from pypto import cli_compile


def test_compile_example(tmp_path, capsys):
    out = tmp_path / "softmax"
    assert cli_compile([os.path.join(EXAMPLES, "row_softmax.py"), "-o", str(out)]) == 0
    assert (out / "kernels" / "aiv" / "softmax_rows.pto").exists()
    assert (out / "kernels" / "aiv" / "softmax_rows.cpp").exists()
    assert (out / "passes_dump" / "17_after_AllocateMemoryAddr.py").exists()
    assert str(out) in capsys.readouterr().out


def test_several_programs_get_subdirectories(tmp_path):
    assert cli_compile([os.path.join(HERE, "programs", "seed000.py"), "-o", str(tmp_path), "--strategy", "PTOAS"]) == 0
    assert (tmp_path / "MulKernel" / "kernels" / "aiv" / "mul_kernel_2d.pto").exists()


def test_missing_file_and_no_program(tmp_path, capsys):
    assert cli_compile([str(tmp_path / "nope.py")]) == 2
    empty = tmp_path / "empty.py"
    empty.write_text("x = 1\n")
    assert cli_compile([str(empty), "-o", str(tmp_path / "o")]) == 2
    assert "no @pl.program" in capsys.readouterr().err
