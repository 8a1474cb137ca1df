"""``lower().as_python()`` (spec pypto-jit §2.6) and arguments whose dtype PyPTO has no type for (§2.4:
a ``TypeError`` naming the function and the argument, never a raw ``ValueError``)."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl


@pl.jit
def negate(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="neg_kernel"):
        y[:, :] = pl.neg(x[:, :])


def test_float64_argument_is_a_type_error_naming_the_argument():
    x = np.ones((8, 8))
    with pytest.raises(TypeError, match=r"@pl.jit function 'negate': argument 'x' has unsupported dtype float64"):
        negate(x, np.zeros_like(x))


def test_complex_out_argument_is_a_type_error_naming_the_argument():
    x = np.ones((8, 8), np.float32)
    with pytest.raises(TypeError, match=r"argument 'y' has unsupported dtype complex64"):
        negate(x, np.zeros((8, 8), np.complex64))


def test_lowered_program_prints_as_python():
    x = np.ones((8, 8), np.float32)
    prog = negate.lower(x, np.zeros_like(x))
    text = prog.as_python()
    assert "def neg_kernel(" in text and "def negate(" in text
    assert "pl.block.neg(" in text or "pl.neg(" in text
    assert len(prog.functions) == 2
    assert {f.name: f.func_type.name for f in prog.functions.values()} == {"negate": "Orchestration",
                                                                           "neg_kernel": "InCore"}


def test_lowered_text_follows_the_argument_shapes():
    x = np.ones((16, 32), np.float32)
    assert "[16, 32]" in negate.lower(x, np.zeros_like(x)).as_python()
