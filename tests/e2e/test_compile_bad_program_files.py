"""`pyptoemu compile` of a program file that is broken in the user's own code: exit 2 at the
program's file:line, never 'internal error ... a bug in pyptoemu' (exit 3) or 'None:None:None'."""

from __future__ import annotations

import pytest

from pypto.cli import main


@pytest.mark.parametrize(("source", "said"), [
    ('import os\n\nraise RuntimeError("boom")\n', ":3:1: error: the program raised RuntimeError: boom"),
    ("x = 1\nassert x == 2, 'nope'\n", ":2:1: error: the program raised AssertionError: nope"),
    ("import no_such_module_for_pyptoemu\n", ":1:1: error: the program raised ModuleNotFoundError"),
], ids=["raise", "assert", "import"])
def test_an_exception_in_the_program_is_located_bad_input(tmp_path, capsys, source, said):
    prog = tmp_path / "prog.py"
    prog.write_text(source)
    assert main([str(prog), "-o", str(tmp_path / "out")]) == 2
    assert f"{prog}{said}" in capsys.readouterr().err


def test_a_binary_program_file_is_located_at_the_file(tmp_path, capsys):
    prog = tmp_path / "prog.py"
    prog.write_bytes(b"x = 1\x00\xff\n")
    assert main([str(prog), "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{prog}:1:1: error:")
    assert "None" not in err
