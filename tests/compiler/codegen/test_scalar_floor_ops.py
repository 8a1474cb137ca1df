"""Scalar ``a // b`` and ``a % b`` in a kernel round toward -inf, as Python, the compiler's constant
folding and the host-side interpreter do, in both back ends.

``arith.remsi``/``remf`` have the dividend's sign and C++'s ``/`` and ``%`` truncate, so a kernel used
to compute ``-7 % 3 = -1`` (Python: 2) and its C++ ``-7 // 2 = -3`` (Python: -4) whenever the operands
were only known at run time: the same expression gave another number once folded.
"""

import importlib.util
import os
import tempfile

import numpy as np
import pytest
from conftest import needs_emulator

from pypto.ir.compiler import compile_program
from pypto.runtime import run

SRC = '''
import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[1, 8], pl.{dt}], n: pl.Scalar[pl.{dt}], d: pl.Scalar[pl.{dt}],
          o: pl.Out[pl.Tensor[[2, 8], pl.{dt}]]) -> pl.Tensor[[2, 8], pl.{dt}]:
        t = pl.load(x, [0, 0], [1, 8])
        a = pl.adds(t, n % d)
        o = pl.store(a, [0, 0], o)
{div}        return o
'''
DIV = '''        b = pl.adds(t, n // d)
        o = pl.store(b, [1, 0], o)
'''


def _program(dtype: str):
    src = SRC.format(dt=dtype, div=DIV if dtype == "INT32" else "")
    path = os.path.join(tempfile.mkdtemp(prefix="pypto_floor_"), f"floor_{dtype}.py")
    with open(path, "w") as f:
        f.write(src)
    spec = importlib.util.spec_from_file_location(f"pypto_floor_{dtype}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.P


SIGNS = [(-7, 3), (7, -3), (-7, -3), (7, 3), (-6, 3), (6, -3), (0, -5), (-2**31 + 1, 2**30)]


@needs_emulator
def test_integer_floor_division_and_modulo_run_as_python_computes_them():
    prog = _program("INT32")
    for n, d in SIGNS:
        r = run(prog, np.zeros((1, 8), np.int32), n, d)
        assert not r.errors(), r.errors()
        assert (int(r.outputs[0][0, 0]), int(r.outputs[0][1, 0])) == (n % d, n // d), (n, d)


@needs_emulator
@pytest.mark.parametrize("n,d", [(-7.5, 2.0), (7.5, -2.0), (-7.5, -2.0), (7.5, 2.0), (-4.0, 2.0), (0.25, -1.0)])
def test_float_modulo_has_the_sign_of_the_divisor(n, d):
    r = run(_program("FP32"), np.zeros((1, 8), np.float32), n, d)
    assert not r.errors(), r.errors()
    assert float(r.outputs[0][0, 0]) == n % d


def test_cpp_calls_the_flooring_helpers():
    text = compile_program(_program("INT32")).cpp["k"]
    assert "TADDS(a, t, pypto_floor_mod<int32_t>(n, d));" in text
    assert "TADDS(b, t, pypto_floor_div<int32_t>(n, d));" in text
    # the helpers, written once after the header: q - 1 when the truncated quotient is inexact and
    # the signs differ; r + b when the truncated remainder is non-zero and its sign is not b's
    assert text.count("static __aicore__ inline T pypto_floor_div(T a, T b)") == 1
    assert "return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q;" in text
    assert "return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;" in text
