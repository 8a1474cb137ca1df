"""Invalid programs (bad/*.py) must fail with the user's file:line and a precise message, never a traceback.

Each file starts with ``# error: LINE: message`` (a substring of the expected error); an optional
``# xfail: reason`` line marks a missing or imprecise diagnostic (a strict xfail). Loading the module is part
of the test: errors raised while Python evaluates annotations or module-level code count too.
"""

from __future__ import annotations

import os
import re

import pytest

from pypto import cli_compile
from pypto.errors import PyptoError
from pypto.ir.compiler import compile_program

from .helpers import HERE, load_file

BAD = os.path.join(HERE, "bad")
NAMES = sorted(f[:-3] for f in os.listdir(BAD) if f.endswith(".py"))
LEAKS = ("Annotation(", "<DataType.", "Traceback", "pypto/")


def _expect(name: str) -> tuple[str, int, str, str | None]:
    path = os.path.join(BAD, name + ".py")
    with open(path) as f:
        head = f.read().splitlines()[:3]
    m = re.match(r"# error: (\d+): (.*)", head[0])
    xf = next((ln[len("# xfail: "):] for ln in head if ln.startswith("# xfail: ")), None)
    return path, int(m.group(1)), m.group(2), xf


def _cases():
    for name in NAMES:
        xf = _expect(name)[3]
        marks = [pytest.mark.xfail(strict=True, reason=xf)] if xf else []
        yield pytest.param(name, marks=marks, id=name)


@pytest.mark.parametrize("name", list(_cases()))
def test_bad_program_reports_file_line_and_message(name):
    path, line, message, _ = _expect(name)
    with pytest.raises(PyptoError) as e:
        compile_program(load_file(path, tag="bad_").Bad)
    text = str(e.value)
    assert text.startswith(f"{path}:{line}:"), text
    assert message in text.splitlines()[0][len(path):], text
    rendered = e.value.render()
    assert not any(s in rendered for s in LEAKS), rendered


@pytest.mark.parametrize("name", list(_cases()))
def test_bad_program_cli(name, capsys, tmp_path):
    path, line, message, _ = _expect(name)
    assert cli_compile([path, "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{path}:{line}:") and message in err.splitlines()[0][len(path):], err
    assert not any(s in err for s in LEAKS), err
