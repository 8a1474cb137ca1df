"""Bad programs fail with the user's file:line and a precise message, never a traceback.

Each file in bad_programs/ starts with ``# error: LINE: message``; ``# compile: yes`` means the error
comes from compilation (e.g. memory overflow) rather than from parsing.
"""

import os
import re

import pytest
from conftest import HERE, load_module

from pypto import cli_compile
from pypto.errors import PyptoError
from pypto.ir.compiler import compile_program

BAD = os.path.join(HERE, "bad_programs")
CASES = sorted(f for f in os.listdir(BAD) if f.endswith(".py"))


def _expect(path):
    with open(path) as f:
        head = f.read().splitlines()
    m = re.match(r"# error: (\d+): (.*)", head[0])
    return int(m.group(1)), m.group(2), any(ln.strip() == "# compile: yes" for ln in head[:3])


@pytest.mark.parametrize("name", CASES)
def test_bad_program(name):
    path = os.path.join(BAD, name)
    line, message, at_compile = _expect(path)
    with pytest.raises(PyptoError) as e:
        mod = load_module(path)
        assert at_compile
        compile_program(mod.Bad)
    text = str(e.value)
    assert text.startswith(f"{path}:{line}:"), text
    assert message in text
    rendered = e.value.render()
    assert "Traceback" not in rendered and "pypto/" not in rendered


@pytest.mark.parametrize("name", CASES)
def test_cli_reports_file_line(name, capsys, tmp_path):
    path = os.path.join(BAD, name)
    line, message, _ = _expect(path)
    assert cli_compile([path, "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{path}:{line}:") and message in err and "Traceback" not in err
