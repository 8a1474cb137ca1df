"""Scalar arguments and truth values: ``--arg arg2=true`` for an ``index`` parameter ran with 1, and
``--arg flag=5`` (or 0.5) for an ``i1`` parameter ran with true: both are bad input now (exit 2); an
``i1`` takes true/false or 0/1, an integer or float parameter takes a number."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

import pyptoemu
from pyptoemu.cli import main
from pyptoemu.errors import InputError

KERNEL = """module {
  func.func @k(%o: !pto.ptr<f32>, %n: index, %flag: i1) {
    %c0 = arith.constant 0 : index
    %one = arith.constant 1.0 : f32
    %two = arith.constant 2.0 : f32
    %v = arith.select %flag, %one, %two : f32
    pto.store_scalar %v, %o[%c0] : !pto.ptr<f32>, f32
    return
  }
}
"""


@pytest.fixture
def kernel(tmp_path) -> Path:
    path = tmp_path / "k.pto"
    path.write_text(KERNEL)
    return path


@pytest.mark.parametrize(("arg", "message"), [("arg1=true", "argument arg1 is index but got the boolean True"),
                                              ("arg2=5", "argument arg2 is i1 (true or false) but got 5"),
                                              ("arg2=0.5", "argument arg2 is i1 (true or false) but got 0.5")])
def test_a_value_of_the_wrong_kind_is_bad_input_on_the_command_line(tmp_path, kernel, arg, message):
    other = {"arg1": "arg1=4", "arg2": "arg2=true"}
    other.pop(arg.split("=")[0])
    argv = ["run", "-q", str(kernel), "--arg", arg, *[a for v in other.values() for a in ("--arg", v)],
            "--output-dir", str(tmp_path / "out")]
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        assert main(argv) == 2
    assert message in err.getvalue()


@pytest.mark.parametrize(("flag", "want"), [(True, 1.0), (False, 2.0), (1, 1.0), (0, 2.0), ("true", 1.0)])
def test_truth_values_and_zero_or_one_select(kernel, flag, want):
    r = pyptoemu.run(kernel, args={"arg1": 4, "arg2": flag})
    assert float(r.outputs["arg0"][0]) == want


def test_a_boolean_for_an_index_raises_from_python(kernel):
    with pytest.raises(InputError, match="argument arg1 is index but got the boolean True"):
        pyptoemu.run(kernel, args={"arg1": True, "arg2": True})
