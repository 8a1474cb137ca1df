"""Valid programs (progs/*.py) run under Default (race-free) and PTOAS and must equal NumPy.

Programs the spec allows but the implementation mishandles are strict xfails (one-line bug in the reason).
"""

from __future__ import annotations

import numpy as np
import pytest

from pypto.ir import python_print
from pypto.ir.compiler import compile_program

from .helpers import STRATEGIES, check, normal, prog


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_orchestration_views_and_tensor_read(strategy):
    x, f = normal((64, 32), seed=1), np.array([[1.5, -2.0, 0.25, 3.0]], np.float32)
    r = check(prog("orchestration", "ViewReadScale"), (x, f), x * np.repeat(f[0], 16)[:, None], strategy)
    assert r.launches == 4


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_orchestration_assemble(strategy):
    x, f = normal((64, 32), seed=2), np.array([[1.5, -2.0, 0.25, 3.0]], np.float32)
    check(prog("assemble", "Assemble"), (x, f), x * np.repeat(f[0], 16)[:, None], strategy)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_inout_updated_in_place_across_two_calls(strategy):
    x, y, acc = normal((16, 32), seed=3), normal((16, 32), seed=4), normal((16, 32), seed=5)
    p = prog("orchestration", "InOutTwice")
    want = acc + x + y  # before the run: acc is InOut, updated in place (spec §10.3)
    r = check(p, (x, y, acc), want, strategy)
    np.testing.assert_allclose(r.arrays["acc"], want, rtol=1e-6)
    np.testing.assert_allclose(acc, want, rtol=1e-6)
    assert r.launches == 2
    k = p.get_function("acc_add")
    assert [d.name for d in k.param_directions] == ["In", "InOut"]
    assert "acc: pl.InOut[pl.Tensor[[16, 32], pl.FP32]]" in python_print(k)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_kernel_with_four_outputs(strategy):
    a, b = normal((16, 32), seed=6), normal((16, 32), seed=7)
    check(prog("orchestration", "FourOuts"), (a, b), (a + b, a * b, np.maximum(a, b)), strategy)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_tiny_1x8(strategy):
    a = normal((1, 8), seed=8)
    check(prog("shapes", "Tiny"), (a,), np.exp(a * np.float32(2)), strategy, rtol=1e-6)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_large_256x256_tensor_ops_are_tiled(strategy):
    a, b = normal((256, 256), seed=9), normal((256, 256), seed=10)
    p = prog("shapes", "Big")
    check(p, (a, b), (a + b) * np.float32(0.5), strategy)
    pto = compile_program(p, strategy).pto["k"]
    assert "scf.for" in pto or pto.count("pto.tload") > 2  # tiled, not one 256 KiB tile


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_tensor_layout_annotation_nd(strategy):
    a = normal((16, 32), seed=11)
    p = prog("shapes", "Layout")
    assert p.get_function("k").params[0].type.tensor_view.layout.name == "ND"
    check(p, (a,), a + 1, strategy)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_tensor_level_column_broadcast(strategy):
    x, c = normal((64, 64), seed=12), normal((64, 1), seed=13)
    check(prog("shapes", "ColBcast"), (x, c), x - c, strategy)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_tensor_level_row_broadcast(strategy):
    x, r = normal((64, 64), seed=14), normal((1, 64), seed=15)
    check(prog("shapes", "RowBcast"), (x, r), x * r, strategy)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_tensor_level_outer_broadcast(strategy):
    c, r = normal((64, 1), seed=16), normal((1, 64), seed=17)
    check(prog("shapes", "OuterAdd"), (c, r), c + r, strategy)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_tile_level_row_broadcast(strategy):
    x, r = normal((16, 32), seed=18), normal((1, 32), seed=19)
    check(prog("shapes", "TileRowBcast"), (x, r), x + r, strategy)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_tile_level_col_expand_mul(strategy):
    x, r = normal((16, 32), seed=20), normal((1, 32), seed=21)
    check(prog("shapes", "TileColExpandMul"), (x, r), x * r, strategy)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_int32_plus_fp32_promotes_to_fp32(strategy):
    a = np.random.default_rng(22).integers(-50, 50, (16, 32)).astype(np.int32)
    b = normal((16, 32), seed=23)
    check(prog("shapes", "IntFloatPromote"), (a, b), (a + b).astype(np.float32), strategy)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_uint32_plus_int32_promotes_to_int32(strategy):
    g = np.random.default_rng(24)
    a, b = g.integers(0, 50, (16, 32)).astype(np.uint32), g.integers(-50, 50, (16, 32)).astype(np.int32)
    check(prog("shapes", "UIntIntPromote"), (a, b), (a.astype(np.int64) + b).astype(np.int32), strategy, atol=0)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_auto_incore_chunked_parallel_loop(strategy):
    x = normal((128, 32), seed=25)
    check(prog("scopes", "AutoChunk"), (x,), x + 1, strategy)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_auto_incore_chunk_remainder_into_out_param(strategy):
    x = normal((160, 32), seed=27)
    check(prog("scopes", "AutoChunkOutParam"), (x,), x + 1, strategy)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_chunk_outside_auto_incore_is_ignored(strategy):
    x = normal((128, 32), seed=26)
    check(prog("scopes", "ChunkOutsideAutoIncore"), (x,), x + 1, strategy)
