"""The examples/jit programs: each runs through @pl.jit and matches NumPy, writing its Out in place."""

from __future__ import annotations

import importlib.util
import os
import sys

import numpy as np

EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "examples", "jit")


def example(name: str):
    path = os.path.join(EXAMPLES, name.split("/")[-1] + ".py")
    spec = importlib.util.spec_from_file_location("jit_example_" + name.split("/")[-1], path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def test_elementwise_chunks_writes_out_in_place():
    mod = example("jit/elementwise_chunks")
    rng = np.random.default_rng(3)
    a = rng.standard_normal((96, 32)).astype(np.float32)
    b = rng.standard_normal((96, 32)).astype(np.float32)
    y = np.full_like(a, np.nan)
    assert mod.add_scale(a, b, y) is None
    np.testing.assert_allclose(y, (a + b) * 2.0, rtol=1e-6, atol=1e-6)


def test_softmax_incore_kernel_matches_numpy():
    mod = example("jit/softmax")
    x = np.random.default_rng(4).standard_normal((64, 32)).astype(np.float32) * 4
    y = np.zeros_like(x)
    mod.softmax(x, y)
    np.testing.assert_allclose(y, mod.reference(x), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(y.sum(axis=1), 1.0, rtol=1e-5)


def test_rms_norm_matches_numpy():
    mod = example("jit/rms_norm")
    rng = np.random.default_rng(5)
    x = rng.standard_normal((32, 64)).astype(np.float32)
    gamma = rng.standard_normal((1, 64)).astype(np.float32)
    y = np.zeros_like(x)
    mod.rms_norm(x, gamma, y)
    np.testing.assert_allclose(y, mod.reference(x, gamma), rtol=1e-5, atol=1e-5)


def test_examples_main_print_ok(capsys):
    for name in ("jit/elementwise_chunks", "jit/softmax", "jit/rms_norm"):
        example(name).main()
    assert capsys.readouterr().out.split() == ["OK", "OK", "OK"]


def test_matmul_splitk_spmd_blocks_add_atomically_on_separate_cube_cores():
    mod = example("jit/matmul_splitk_spmd")
    rng = np.random.default_rng(8)
    a = rng.standard_normal((32, 512)).astype(np.float16)
    b = rng.standard_normal((512, 32)).astype(np.float16)
    c = np.full((32, 32), np.nan, np.float32)
    mod.matmul_splitk(a, b, c, 4)
    np.testing.assert_allclose(c, mod.reference(a, b), rtol=1e-4, atol=1e-3 * np.sqrt(512))
    cores = mod.matmul_splitk.last_result.cores
    assert sorted(core.id for core in cores if core.kind == "aic") == ["AIC0", "AIC1", "AIC2", "AIC3"]


def test_fused_linear_matches_numpy():
    mod = example("jit/fused_linear")
    rng = np.random.default_rng(9)
    x = rng.standard_normal((128, 128)).astype(np.float16)
    w = (rng.standard_normal((128, 64)) / 8).astype(np.float16)
    bias = rng.standard_normal((1, 64)).astype(np.float32)
    y = np.zeros((128, 64), np.float32)
    mod.fused_linear(x, w, bias, y)
    np.testing.assert_allclose(y, mod.reference(x, w, bias), rtol=1e-4, atol=1e-4)
    kinds = [core.kind for core in mod.fused_linear.last_result.cores]
    assert kinds.count("aic") == 2 and kinds.count("aiv") == 4  # 128/64 cube blocks, 128/32 vector blocks


def test_placement_examples_main_print_ok(capsys):
    for name in ("jit/matmul_splitk_spmd", "jit/fused_linear"):
        example(name).main()
    lines = capsys.readouterr().out.splitlines()
    assert [line for line in lines if line == "OK"] == ["OK", "OK"]
    assert lines[-1] == "OK" and "cycles" in lines[0]  # each prints its simulated time first


def test_flash_attention_matches_numpy_and_prints_ok(capsys):
    mod = example("jit/flash_attention")
    rng = np.random.default_rng(8)
    q = rng.standard_normal((mod.BQ, mod.D)).astype(np.float16)
    k = (rng.standard_normal((2 * mod.BK, mod.D)) * 2).astype(np.float16)  # sharper rows: the max moves
    v = rng.standard_normal((2 * mod.BK, mod.D)).astype(np.float16)
    o = np.zeros((mod.BQ, mod.D), np.float32)
    mod.flash_attention(q, k, v, o)
    np.testing.assert_allclose(o, mod.reference(q, k, v), rtol=2e-3, atol=2e-3)
    mod.main()
    lines = capsys.readouterr().out.splitlines()
    assert lines[-1] == "OK" and "cycles" in lines[0]


def test_paged_attention_decode_uses_only_the_context(capsys):
    mod = example("jit/paged_attention_decode")
    rng = np.random.default_rng(9)
    q = rng.standard_normal((mod.HEADS, mod.D)).astype(np.float16)
    k_cache = rng.standard_normal((6 * mod.PAGE, mod.D)).astype(np.float16)
    v_cache = rng.standard_normal((6 * mod.PAGE, mod.D)).astype(np.float16)
    table = np.array([4, 1, 5, 0, 2, 3], np.int32)
    o = np.zeros((mod.HEADS, mod.D), np.float32)
    mod.paged_attention_decode(q, k_cache, v_cache, table, o, 70)  # 3 pages, the last holds 6 keys
    want = mod.reference(q, k_cache, v_cache, table, 70)
    np.testing.assert_allclose(o, want, rtol=2e-3, atol=2e-3)
    # the padded keys of the last page would have changed the result
    assert np.abs(want - mod.reference(q, k_cache, v_cache, table, 96)).max() > 1e-2
    mod.main()
    lines = capsys.readouterr().out.splitlines()
    assert lines[-1] == "OK" and "cycles" in lines[0]
