"""Scalar integer results a kernel cannot hold, and names that end with their loop.

``INT32_MIN % -1``: Python and NumPy both give 0; the compiled program gives 0 too (the .pto's
floored remainder divides by 1 where the divisor is -1; the C++ helper returns 0 there).
``INT32_MIN // -1``: Python gives 2**31, which an INT32 does not hold, and NumPy wraps it to
INT32_MIN with an overflow warning. Between constants the compiler refuses it at the user's line;
at run time the kernel faults, located at the user's line, never giving a number.

A scalar first assigned in a loop body and read after the loop is refused at the reading Python
line (it used to fail in the emulator's verifier at a generated .pto location).
"""

import importlib.util
import os
import tempfile

import numpy as np
import pytest
from conftest import needs_emulator

from pypto.errors import CompileError, ParseError
from pypto.ir.compiler import compile_program
from pypto.runtime import run

HEAD = '''import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[1, 8], pl.INT32], n: pl.Scalar[pl.INT32], d: pl.Scalar[pl.INT32],
          o: pl.Out[pl.Tensor[[1, 8], pl.INT32]]) -> pl.Tensor[[1, 8], pl.INT32]:
        t = pl.load(x, [0, 0], [1, 8])
'''
TAIL = '''        o = pl.store(a, [0, 0], o)
        return o
'''


def _program(body: str, name: str):
    path = os.path.join(tempfile.mkdtemp(prefix="pypto_intedge_"), f"{name}.py")
    with open(path, "w") as f:
        f.write(HEAD + body + TAIL)
    spec = importlib.util.spec_from_file_location(f"pypto_intedge_{name}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.P, path


def test_what_python_and_numpy_give():
    assert (-2**31) % -1 == 0 and (-2**31) // -1 == 2**31
    with np.errstate(over="ignore"):
        assert int(np.int32(-2**31) % np.int32(-1)) == 0
        assert int(np.int32(-2**31) // np.int32(-1)) == -2**31  # wrapped: not Python's number


@needs_emulator
def test_run_time_min_mod_minus_one_is_zero_as_in_python():
    prog, _ = _program("        a = pl.adds(t, n % d)\n", "mod")
    for n, d in [(-2**31, -1), (7, -1), (-7, -1), (-7, 3), (2**31 - 1, -2**31)]:
        r = run(prog, np.zeros((1, 8), np.int32), n, d)
        assert not r.errors(), r.errors()
        assert int(r.outputs[0][0, 0]) == n % d, (n, d)


@needs_emulator
def test_run_time_min_floordiv_minus_one_is_a_fault_at_the_users_line():
    from pyptoemu.errors import KernelFault

    prog, path = _program("        a = pl.adds(t, n // d)\n", "div")
    with pytest.raises(KernelFault) as info:
        run(prog, np.zeros((1, 8), np.int32), -2**31, -1)
    assert info.value.loc.file == path and info.value.loc.line == 10, info.value.loc
    assert "2147483648 does not fit i32" in info.value.message
    r = run(prog, np.zeros((1, 8), np.int32), -2**31, 1)  # the neighbours are exact
    assert int(r.outputs[0][0, 0]) == -2**31


def test_constant_min_floordiv_minus_one_is_refused_at_compile_time():
    prog, path = _program("        a = pl.adds(t, -2147483648 // -1)\n", "cdiv")
    with pytest.raises(CompileError) as info:
        compile_program(prog)
    assert info.value.span.filename == path and info.value.span.line == 10
    assert "2147483648 does not fit INT32" in str(info.value)


def test_an_out_of_range_literal_is_refused_at_its_line():
    prog, _ = _program("        m = n * 0 - 2147483648\n        a = pl.adds(t, m)\n", "lit")
    with pytest.raises(CompileError, match="2147483648 does not fit INT32") as info:
        compile_program(prog)
    assert info.value.span.line == 10


@needs_emulator
def test_constant_min_mod_minus_one_folds_to_zero():
    prog, _ = _program("        a = pl.adds(t, -2147483648 % -1)\n", "cmod")
    r = run(prog, np.full((1, 8), 5, np.int32), 0, 1)
    assert (r.outputs[0] == 5).all()


def test_cpp_floor_mod_helper_answers_minus_one_first():
    prog, _ = _program("        a = pl.adds(t, n % d)\n", "cppmod")
    text = compile_program(prog).cpp["k"]
    assert "if (b == static_cast<T>(-1)) return 0;" in text


def test_a_scalar_assigned_only_in_a_loop_is_refused_where_it_is_read():
    body = ("        for i in pl.range(n):\n"
            "            s = i * 2\n"
            "        a = pl.adds(t, s)\n")
    with pytest.raises(ParseError) as info:
        _program(body, "loop_local")
    assert info.value.span.line == 12 and info.value.span.col == 24, info.value.span
    assert "'s' is assigned only inside a loop body (line 11)" in str(info.value)


@needs_emulator
def test_a_scalar_assigned_before_the_loop_is_carried_through_it():
    body = ("        s = n * 0\n"
            "        for i in pl.range(n):\n"
            "            s = i * 2\n"
            "        a = pl.adds(t, s)\n")
    prog, _ = _program(body, "carried")
    r = run(prog, np.zeros((1, 8), np.int32), 3, 1)
    assert int(r.outputs[0][0, 0]) == 4
