"""Invalid programs (bad/*.py) must fail with the user's file:line and a precise message, never a traceback.

Each file starts with ``# error: LINE: message`` (a substring of the expected error); an optional
``# xfail: reason`` line marks a missing or imprecise diagnostic (a strict xfail). Loading the module is part
of the test: errors raised while Python evaluates annotations or module-level code count too.
"""

from __future__ import annotations

import os

import pytest

from pypto import cli_compile
from pypto.errors import PyptoError
from pypto.ir.compiler import compile_program
from tests.bad_cases import cases, expectation

from .helpers import HERE, load_file

BAD = os.path.join(HERE, "bad")
LEAKS = ("Annotation(", "<DataType.", "Traceback", "pypto/")


def _expect(name: str) -> tuple[str, int, str, str | None]:
    path = os.path.join(BAD, name + ".py")
    return (path, *expectation(path))


@pytest.mark.parametrize("name", cases(BAD))
def test_bad_program_reports_file_line_and_message(name):
    path, line, message, _ = _expect(name)
    with pytest.raises(PyptoError) as e:
        compile_program(load_file(path, tag="bad_").Bad)
    text = str(e.value)
    assert text.startswith(f"{path}:{line}:"), text
    assert message in text.splitlines()[0][len(path):], text
    rendered = e.value.render()
    assert not any(s in rendered for s in LEAKS), rendered


@pytest.mark.parametrize("name", cases(BAD))
def test_bad_program_cli(name, capsys, tmp_path):
    path, line, message, _ = _expect(name)
    assert cli_compile([path, "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{path}:{line}:") and message in err.splitlines()[0][len(path):], err
    assert not any(s in err for s in LEAKS), err
