"""A name bound inside one ``pl.at`` region and used by a later region is a task output held in DDR
(spec pypto-jit §4.1 (b)): the first kernel stores it, the next loads it back."""

from __future__ import annotations

import numpy as np

import pypto.language as pl


@pl.jit
def exp_then_double(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        e = pl.exp(x[:, :])
    with pl.at(level=pl.Level.CORE_GROUP):
        y[:, :] = pl.muls(e, 2.0)


def test_vector_tile_bound_in_one_region_feeds_the_next():
    x = np.random.default_rng(21).standard_normal((16, 32)).astype(np.float32)
    y = np.zeros_like(x)
    exp_then_double(x, y)
    np.testing.assert_allclose(y, 2 * np.exp(x), rtol=1e-5)


def test_the_carried_tile_is_an_out_parameter_of_its_kernel_and_an_input_of_the_next():
    x = np.ones((16, 32), np.float32)
    prog = exp_then_double.lower(x, np.zeros_like(x))
    kernels = [f for f in prog.functions_list if f.name != "exp_then_double"]
    assert [[d.name for d in f.param_directions] for f in kernels] == [["In", "Out"], ["In", "Out"]]


@pl.jit
def matmul_then_relu(a: pl.Tensor, b: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="cube_only"):
        la = pl.move(pl.load(a, [0, 0], [32, 64], target_memory=pl.MemorySpace.Mat),
                     target_memory=pl.MemorySpace.Left)
        rb = pl.move(pl.load(b, [0, 0], [64, 32], target_memory=pl.MemorySpace.Mat),
                     target_memory=pl.MemorySpace.Right)
        acc = pl.matmul(la, rb)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="vector_only"):
        y[:, :] = pl.relu(pl.adds(acc, -0.5))


def test_accumulator_from_a_cube_region_feeds_a_vector_region():
    rng = np.random.default_rng(22)
    a = rng.standard_normal((32, 64)).astype(np.float16)
    b = rng.standard_normal((64, 32)).astype(np.float16)
    y = np.zeros((32, 32), np.float32)
    matmul_then_relu(a, b, y)
    ref = np.maximum(a.astype(np.float32) @ b.astype(np.float32) - 0.5, 0)
    np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-4)


@pl.jit
def scalar_crosses_regions(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="pick"):
        s = pl.read(x, [0, 1])
        n = pl.cast(pl.read(x, [0, 0]), pl.INDEX)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="use"):
        y[:, :] = pl.adds(x[:, :], s)
    for i in pl.range(n):  # the host reads the carried count for its loop bound
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="bump"):
            y[i:i + 1, :] = pl.adds(y[i:i + 1, :], 100.0)


def test_scalars_bound_in_a_region_feed_a_later_region_and_a_host_loop():
    x = np.random.default_rng(23).standard_normal((8, 16)).astype(np.float32)
    x[0, 0] = 3.0
    y = np.zeros_like(x)
    scalar_crosses_regions(x, y)
    want = x + x[0, 1]
    want[:3] += 100.0
    np.testing.assert_allclose(y, want, rtol=1e-6)
