"""Red-team PyPTO programs written the way users coming from the seeds would write them.

Each program (tests/compiler/user_programs/progs/*.py) is compiled and run on the emulator under the Default
strategy (compiler-inserted sync: must be race-free and match NumPy) and under PTOAS (sync left to the
emulator: must match NumPy). Programs that are valid per the spec but mishandled are strict xfails.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from pypto.runtime import run

from .helpers import prog

BF16 = np.dtype(ml_dtypes.bfloat16)
TOL = {np.dtype(np.float32): (1e-5, 1e-6), np.dtype(np.float16): (1e-3, 1e-3), BF16: (1.6e-2, 1.6e-2)}
STRATEGIES = ["Default", "PTOAS"]


def rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def normal(shape, dtype=np.float32, seed=0) -> np.ndarray:
    return rng(seed).standard_normal(shape).astype(dtype)


def races(r) -> list:
    return [f for f in r.findings if "race" in getattr(f, "kind", "") or getattr(f, "severity", "") == "error"]


def check(program, args, want, strategy, entry=None, tol=None, out=None):
    """Run ``program`` and compare its outputs (all of them, or output ``out``) with ``want``."""
    r = run(program, *args, entry=entry, strategy=strategy)
    if strategy == "Default":
        assert not races(r), races(r)
    wants = want if isinstance(want, tuple) else (want,)
    gots = r.outputs if out is None else (r.outputs[out],)
    assert len(gots) == len(wants), (len(gots), len(wants))
    for got, exp in zip(gots, wants, strict=False):
        assert got.shape == exp.shape and got.dtype == exp.dtype, (got.shape, got.dtype, exp.shape, exp.dtype)
        rtol, atol = tol or TOL[np.dtype(exp.dtype)]
        np.testing.assert_allclose(got.astype(np.float64), exp.astype(np.float64), rtol=rtol, atol=atol)
    return r


def mm_tol(k: int) -> tuple:
    return (1e-4, 1e-5 * k)


# ----------------------------------------------------------------------------- orchestration


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_two_kernels_in_sequence(strategy):
    x, y = normal((64, 64), seed=1), normal((64, 64), seed=2)
    r = check(prog("two_kernels", "TwoKernels"), (x, y), (x * 2 + 1) * y, strategy)
    assert r.launches == 1  # FuseLoops merges the two launches; the temporary t stays on chip


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_host_loop_with_scalar_offset(strategy):
    x = normal((128, 32), seed=3)
    r = check(prog("host_loop_offset", "HostLoopOffset"), (x,), np.maximum(x, 0) - np.float32(0.25), strategy)
    assert r.launches == 4


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_host_loop_over_tensor_views(strategy):
    x = normal((128, 64), seed=4)
    r = check(prog("host_loop_view", "HostLoopView"), (x,), np.exp(x) * np.float32(0.5), strategy)
    assert r.launches == 4


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_host_loop_over_column_views(strategy):
    x = normal((128, 64), seed=49)
    want = x.copy()
    want[:, 32:] += np.float32(32)
    r = check(prog("host_loop_view", "ColumnViews"), (x,), want, strategy)
    assert r.launches == 2


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("mode,n", [(1, 3), (0, 4), (-2, 0)])
def test_orchestration_read_if_and_scalar_trip_count(strategy, mode, n):
    x = normal((64, 32), seed=5)
    y = x + 1 if mode > 0 else x * x
    want = sum((y[16 * i:16 * i + 16] for i in range(n)), np.zeros((16, 32), np.float32))
    check(prog("orch_control", "OrchControl"), (x, np.array([[mode, n]], np.int32)), want, strategy)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_external_function_and_two_results(strategy):
    a, b = normal((32, 64), seed=6), normal((32, 64), seed=7)
    check(prog("external_multi", "ExternalMulti"), (a, b), (a + b, (a - b) ** 2), strategy)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_scalar_parameters_in_tile_scalar_ops(strategy):
    x = normal((32, 32), seed=8)
    want = np.maximum((x * np.float32(1.5) + np.float32(-0.75)) / np.float32(3.0), np.float32(-0.5))
    check(prog("scalar_params", "ScalarParams"), (x, 1.5, 0.25), want, strategy)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_incore_scope_in_opaque_function(strategy):
    x, y = normal((32, 32), seed=9), normal((32, 32), seed=10)
    check(prog("incore_scope", "IncoreScope"), (x, y), x * y + 1, strategy)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_tensor_level_ops_in_kernel(strategy):
    a, b = normal((32, 64), seed=11), normal((32, 64), seed=12)
    check(prog("tensor_ops_kernel", "TensorOps"), (a, b), np.exp(a - b) * np.float32(0.5) + a, strategy)


# ----------------------------------------------------------------------------- loops and control flow


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_loop_carries_tile_and_scalars(strategy):
    x = normal((64, 64), seed=13)
    want = sum(x[16 * i:16 * i + 16] * np.float32(0.5**i) for i in range(4)) + np.float32(4)
    check(prog("loop_carry", "LoopCarry"), (x,), want, strategy)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_nested_loops(strategy):
    x = normal((64, 128), seed=14)
    want = x.copy()
    for rb in range(4):
        for cb in range(4):
            blk = (slice(rb * 16, rb * 16 + 16), slice(cb * 32, cb * 32 + 32))
            want[blk] = x[blk] * np.float32(rb + 1) + np.float32(cb)
    check(prog("nested_loops", "Nested"), (x,), want, strategy)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_if_on_loop_var_yields_tile_and_scalar(strategy):
    x = normal((96, 32), seed=15)
    want = np.zeros((16, 32), np.float32)
    for i in range(6):
        want = want + x[16 * i:16 * i + 16] if i % 2 == 0 else want - x[16 * i:16 * i + 16]
    check(prog("if_yields", "IfYields"), (x,), want + np.float32(3), strategy)


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("flag", [1, 0])
def test_parallel_unroll_and_if_without_yield(strategy, flag):
    x = normal((64, 32), seed=16)
    acc = x[:16] * np.float32(1) + x[:16] * np.float32(2) + x[:16] * np.float32(3)
    want_y = x + np.repeat(np.arange(4, dtype=np.float32), 16)[:, None]
    check(prog("loop_kinds", "LoopKinds"), (x, flag), (want_y, np.abs(acc) if flag else -acc), strategy)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_if_branches_on_different_pipes(strategy):
    x, bias = normal((64, 64), seed=50), normal((16, 64), seed=51)
    xb = x.reshape(4, 16, 64)
    want = np.concatenate([xb[b] if b % 2 == 0 else xb[b - 1] * 2 for b in range(4)]) + np.tile(bias, (4, 1))
    check(prog("if_pipes", "IfPipes"), (x, bias), want, strategy)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_gm_scratch_written_then_read_back(strategy):
    x = normal((64, 64), seed=17)
    w = (x * 2).reshape(4, 16, 64)[::-1].reshape(64, 64)
    check(prog("gm_roundtrip", "GmRoundTrip"), (x,), w + 1, strategy)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_while_loop_with_init_values(strategy):
    x = normal((128, 64), seed=18)
    want = x[:48].reshape(3, 16, 64).sum(axis=0)
    check(prog("while_loop", "WhileSum"), (x, 3), want, strategy)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_natural_while_loop(strategy):
    x = normal((32, 32), seed=19)
    check(prog("natural_while", "NaturalWhile"), (x,), x * 8, strategy)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_negative_step_loop_fp16_cast(strategy):
    x = normal((64, 64), np.float16, seed=20)
    xf = x.astype(np.float32).reshape(4, 16, 64)
    want = np.cumsum(xf[::-1], axis=0)[::-1].reshape(64, 64).astype(np.float16)
    check(prog("reverse_cast", "ReverseCast"), (x,), want, strategy)


# ----------------------------------------------------------------------------- shapes


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("rows", [16, 48])
def test_dynamic_rows_kernel_entry(strategy, rows):
    x = normal((rows, 64), seed=21)
    check(prog("dynamic_rows", "DynamicRows"), (x, np.zeros_like(x)), x * x, strategy, entry="sq")


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_dynamic_rows_from_orchestration(strategy):
    x = normal((48, 64), seed=22)
    check(prog("dynamic_rows", "DynamicOrch"), (x,), x * x, strategy)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_dynamic_tail_with_valid_shapes(strategy):
    x = normal((40, 64), seed=23)
    check(prog("dynamic_rows", "DynamicTail"), (x, np.zeros_like(x)), x + 1, strategy, entry="plus1")


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_keyword_forms_and_static_valid_shapes(strategy):
    x = normal((48, 32), seed=24)
    y = np.full((48, 32), 7.0, np.float32)
    want = x * 3 - 1
    want[40:] = 7.0
    check(prog("keywords_valid", "ValidInBounds"), (x, y), want, strategy, entry="k")


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_valid_shapes_tail_past_tensor_end(strategy):
    x = normal((40, 32), seed=25)
    check(prog("valid_tail", "KeywordsValid"), (x,), x * 3 - 1, strategy)


# ----------------------------------------------------------------------------- dtypes


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_fp16_program(strategy):
    a, b = normal((32, 64), np.float16, 26), normal((32, 64), np.float16, 27)
    check(prog("dtypes", "Half"), (a, b), np.maximum(a * np.float16(0.5), b) + a * b, strategy)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_bf16_program(strategy):
    a, b = normal((32, 64), BF16, 28), normal((32, 64), BF16, 29)
    want = ((a.astype(np.float32) - b.astype(np.float32)) * 2).astype(BF16)
    check(prog("dtypes", "BFloat"), (a, b), want, strategy)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_int32_program(strategy):
    a = rng(30).integers(-100, 100, (32, 64)).astype(np.int32)
    b = rng(31).integers(-100, 100, (32, 64)).astype(np.int32)
    check(prog("dtypes", "Int32"), (a, b), np.maximum(a * b + 7 - a, -3).astype(np.int32), strategy, tol=(0, 0))


def test_fp16_tile_times_float_literal_promotes_to_fp32():
    x = normal((16, 16), np.float16, 32)
    check(prog("promote_literal", "PromoteLiteral"), (x,), x.astype(np.float32) * np.float32(0.5), "Default")


# ----------------------------------------------------------------------------- matmul


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_matmul_bias(strategy):
    a, b, bias = normal((32, 64), seed=33), normal((64, 64), seed=34), normal((1, 64), seed=35)
    check(prog("matmul_kloop", "MatmulBias"), (a, b, bias), a @ b + bias, strategy, tol=mm_tol(64))


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_matmul_fp16_same_shapes_untransposed(strategy):
    """The non-transposed twin of the transposed case below works."""
    a, b = normal((32, 64), np.float16, 36), normal((64, 32), np.float16, 37)
    want = a.astype(np.float32) @ b.astype(np.float32)
    check(prog("transpose_mm", "PlainMM"), (a, b), want, strategy, tol=mm_tol(64))


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_matmul_with_transposed_operand(strategy):
    a, bt = normal((32, 64), np.float16, 38), normal((32, 64), np.float16, 39)
    want = a.astype(np.float32) @ bt.astype(np.float32).T
    check(prog("transpose_mm", "TransposeMM"), (a, bt), want, strategy, tol=mm_tol(64))


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("cls", ["MatmulKLoop", "MatmulTiled", "MatmulSimpleLoop", "MatmulUnrolled"])
def test_matmul_k_loop_accumulation(strategy, cls):
    a, b = normal((32, 256), np.float16, 40), normal((256, 64), np.float16, 41)
    want = a.astype(np.float32) @ b.astype(np.float32)
    check(prog("matmul_kloop", cls), (a, b), want, strategy, tol=mm_tol(256))


# ----------------------------------------------------------------------------- composite kernels


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_layernorm(strategy):
    x, g, b = normal((64, 128), seed=42), normal((1, 128), seed=43), normal((1, 128), seed=44)
    mu = x.mean(axis=1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=1, keepdims=True)
    check(prog("norms", "LayerNorm"), (x, g, b), ((x - mu) / np.sqrt(var + 1e-5) * g + b).astype(np.float32),
          strategy, tol=(1e-5, 1e-5))


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_rmsnorm(strategy):
    x, g = normal((64, 128), seed=45), normal((1, 128), seed=46)
    want = (x / np.sqrt((x * x).mean(axis=1, keepdims=True) + 1e-5) * g).astype(np.float32)
    check(prog("norms", "RMSNorm"), (x, g), want, strategy, tol=(1e-5, 1e-5))


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_softmax_with_inline_helpers(strategy):
    x = normal((64, 64), seed=47) * 4
    xs = x * np.float32(0.125)
    e = np.exp(xs - xs.max(axis=1, keepdims=True))
    check(prog("inline_softmax", "InlineSoftmax"), (x,), e / e.sum(axis=1, keepdims=True), strategy)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_hand_written_sync_in_a_loop(strategy):
    x = normal((64, 64), seed=48)
    r = check(prog("hand_sync", "HandSync"), (x,), np.exp(x) * np.float32(2), strategy)
    assert not races(r), races(r)
