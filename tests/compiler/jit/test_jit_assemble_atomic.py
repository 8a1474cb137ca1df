"""``pl.assemble(target, source, offset, atomic=pl.AtomicType.Add)`` in InCore code adds the source
into the tensor window (spec pypto-jit §6.4), as MoE's scatter-add of each expert's weighted output
into its token's row is written. It was refused ("pl.assemble: got an unexpected keyword argument
'atomic'"), and a plain pl.assemble of a tensor-level value in a pl.at region ended in "tensor op
tensor.assemble is left in an InCore function"."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import PyptoError

T, H, F = 5, 32, 16


@pl.jit
def scatter_experts(x: pl.Tensor, w1: pl.Tensor, w2: pl.Tensor, route: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="zero"):
        y[:, :] = pl.full([T, H], dtype=pl.FP32, value=0.0)
    for t in pl.range(T):
        xt = x[t:t + 1, :]
        for k in pl.range(2):
            e = pl.cast(pl.read(route, [t, k]), pl.INDEX)
            w1e = w1[e * H:(e + 1) * H, :]
            w2e = w2[e * F:(e + 1) * F, :]
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="expert"):
                h = pl.relu(pl.matmul(xt, w1e))
                pl.assemble(y, pl.mul(pl.matmul(h, w2e), 0.5), [t, 0], atomic=pl.AtomicType.Add)


@pl.jit
def rows_into(x: pl.Tensor, y: pl.InOut[pl.Tensor]):
    for t in pl.range(4):
        xt = x[t:t + 1, :]
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="put"):
            pl.assemble(y, pl.mul(xt, 2.0), [t, 0])
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="add_tiles"):
        for t in pl.range(4):
            pl.assemble(y, pl.load(x, [t, 0], [1, 32]), [t, 0], atomic=pl.AtomicType.Add)


@pl.jit
def atomic_on_the_host(x: pl.Tensor, y: pl.InOut[pl.Tensor]):
    pl.assemble(y, x, [0, 0], atomic=pl.AtomicType.Add)


def test_experts_scatter_add_into_token_rows():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((T, H)).astype(np.float32)
    w1 = (rng.standard_normal((4 * H, F)) * 0.3).astype(np.float32)
    w2 = (rng.standard_normal((4 * F, H)) * 0.3).astype(np.float32)
    route = np.array([[0, 1], [2, 2], [3, 0], [1, 3], [2, 1]], np.int32)  # token 1 takes expert 2 twice
    y = np.full((T, H), np.nan, np.float32)
    scatter_experts(x, w1, w2, route, y)
    want = np.zeros((T, H))
    for t in range(T):
        for e in route[t]:
            want[t] += 0.5 * np.maximum(x[t] @ w1[e * H:(e + 1) * H], 0) @ w2[e * F:(e + 1) * F]
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)


def test_plain_and_tile_assembles_in_regions():
    x = np.random.default_rng(4).standard_normal((4, 32)).astype(np.float32)
    y = np.ones_like(x)
    rows_into(x, y)
    np.testing.assert_allclose(y, 3 * x, rtol=1e-6)


def test_atomic_assemble_in_orchestration_is_refused_at_the_line():
    x = np.zeros((4, 32), np.float32)
    with pytest.raises(PyptoError, match="adds into a tensor from InCore code") as info:
        atomic_on_the_host(x, np.zeros_like(x))
    assert f"{__file__}:{atomic_on_the_host.__wrapped__.__code__.co_firstlineno + 2}:" in str(info.value)
