"""``-t`` on a tile or tensor is refused like the other Python operators, naming pl.neg, at the
expression (it said "expected a scalar operand, got TileType")."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import PyptoTypeError


@pl.jit
def negate(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = x[:, :]
        y[:, :] = -t


def test_unary_minus_on_a_tile_names_pl_neg_at_the_expression():
    x = np.ones((8, 16), np.float32)
    with pytest.raises(PyptoTypeError, match=r"Python operators on tiles/tensors are not supported; use pl.neg") as info:
        negate(x, np.zeros_like(x))
    line = negate.__wrapped__.__code__.co_firstlineno + 4
    assert str(info.value).startswith(f"{__file__}:{line}:")
