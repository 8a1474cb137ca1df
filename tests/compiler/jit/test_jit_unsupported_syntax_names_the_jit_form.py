"""Unsupported statements in @pl.jit code name the form the user wrote (red team round 4: a ``break`` in
a jit body said "inside a @pl.function body", a decorator the program never used); @pl.program code keeps
its message."""

from __future__ import annotations

import runpy
from pathlib import Path

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import ParseError


@pl.jit
def breaks(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    for _ in pl.range(4):
        break
    with pl.at(level=pl.Level.CORE_GROUP):
        y[:, :] = pl.exp(x)


@pl.jit.incore
def continues(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    for _ in pl.range(4):
        continue
    y[:, :] = pl.exp(x)


@pl.jit
def calls_incore(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    continues(x, y)


def _args() -> tuple[np.ndarray, np.ndarray]:
    return np.ones((8, 8), np.float32), np.zeros((8, 8), np.float32)


def test_break_in_a_jit_entry_names_pl_jit_at_its_line():
    line = breaks.__wrapped__.__code__.co_firstlineno + 3
    with pytest.raises(ParseError, match=rf"names_the_jit_form.py:{line}:9: .*'break' inside a @pl.jit function body"):
        breaks(*_args())


def test_continue_in_a_jit_incore_callee_names_pl_jit_incore():
    line = continues.__wrapped__.__code__.co_firstlineno + 3
    with pytest.raises(ParseError, match=rf"names_the_jit_form.py:{line}:9: .*'continue' inside a @pl.jit.incore "
                       r"function body"):
        calls_incore(*_args())




def test_break_in_a_pl_function_still_names_pl_function():
    path = Path(__file__).parents[1] / "user_programs" / "bad" / "break_in_loop.py"
    with pytest.raises(ParseError, match=r"'break' inside a @pl.function body"):
        runpy.run_path(str(path))
