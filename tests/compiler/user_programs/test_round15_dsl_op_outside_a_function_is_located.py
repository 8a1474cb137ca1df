"""Fifteenth red-team round: a program file that calls a DSL op outside any function body, at its top
level (``opts = [pl.split(pl.SplitMode.UP_DOWN)]``, to pass as ``optimizations=opts``) or in a plain
helper it runs, stopped ``pyptoemu compile`` with exit 2 but no place: "error: pl.split can only be
used inside a @pl.function body". It is now located at the file's line and column of the call, with
the source line and a caret, like every other mistake."""

from __future__ import annotations

import pytest

from pypto.cli import main


@pytest.mark.parametrize(("source", "where", "op"), [
    ("import pypto.language as pl\nopts = [pl.split(pl.SplitMode.UP_DOWN)]\n", "2:9", "pl.split"),
    ("import pypto.language as pl\n\n\ndef helper():\n    return pl.block.add(1, 2)\n\n\nx = helper()\n",
     "5:12", "pl.block.add"),
], ids=["top_level", "in_a_helper"])
def test_a_dsl_op_called_outside_a_function_body_is_located(tmp_path, capsys, source, where, op):
    prog = tmp_path / "prog.py"
    prog.write_text(source)
    assert main([str(prog), "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{prog}:{where}: error: {op} can only be used inside a @pl.function body"), err
    assert "^" in err and "Traceback" not in err
