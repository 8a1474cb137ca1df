"""Fourth red-team round: hand-written kernels in the style of pto-isa's own tests
(tests/e2e/user_kernels/kernels/k57..k67): ragged row softmax with run-time valid rows in the generic
form, memref-level int16 quantization, Newton iterations in scf.while carrying a tile, a helper called
per block returning a scalar, A5 int8 quantization and bf16 rms_norm through a helper, a level-3
ping-pong with a ragged tail, an SPMD grid-stride loop over a block count that does not divide the
work, compare/select in the generic form, column reductions carried by iter_args, and a K-loop matmul
stored from L0C with relu into f16. Each runs through ``pyptoemu.run`` (vs NumPy, no finding) and the
CLI (``--json``; the same cycles with ``--no-data`` where no tile value steers a scalar). bad41: a
select whose destination got the scratch's place is refused at its line; bad42: a loop yielding a tile
of another shape than it carries is refused at the yield.
"""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from tests.e2e.user_kernels.running import cli_json, run_clean

BF16 = ml_dtypes.bfloat16


_run = run_clean


def _cli(name: str, args: dict, blocks: int, tmp_path: Path, *extra: str) -> tuple[int, dict | str]:
    return cli_json(name, args, tmp_path, *extra, blocks=blocks)


def _x(shape, seed, lo=None, hi=None, dtype=np.float32) -> np.ndarray:
    rng = np.random.default_rng(seed)
    v = rng.standard_normal(shape) if lo is None else rng.uniform(lo, hi, shape)
    return v.astype(dtype)


@pytest.mark.parametrize("n", [1, 8, 21])
def test_row_softmax_with_run_time_valid_rows_in_the_generic_form(n):
    x = _x((n, 64), n)
    r = _run("k57_generic_row_softmax_dyn_rows.pto", {"arg0": x}, {"arg2": n})
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(r.outputs["arg1"].reshape(n, 64), e / e.sum(1, keepdims=True), rtol=1e-6, atol=1e-7)


def test_memref_level_int16_quantization_round_trip():
    x = _x(1024, 1) * np.float32(30)
    r = _run("k58_memref_quant_i16_rows.pto", {"arg0": x, "arg1": np.zeros(1024, np.int16)}, {"arg3": 6})
    want = np.trunc(x[:768] * np.float32(64)).astype(np.int16)
    np.testing.assert_array_equal(r.outputs["arg1"].ravel()[:768], want)
    assert not r.outputs["arg1"].ravel()[768:].any()  # windows past %nb untouched
    np.testing.assert_array_equal(r.outputs["arg2"].ravel()[:768], want.astype(np.float32) / 64)


@pytest.mark.parametrize("iters", [0, 10])
def test_newton_rsqrt_iterations_carry_a_tile_through_scf_while(iters):
    x = _x((16, 64), 2, 0.5, 2.5)
    r = _run("k59_while_newton_rsqrt.pto", {"arg0": x}, {"arg2": iters})
    want = np.ones_like(x)
    for _ in range(iters):
        want = want * (np.float32(1.5) + np.float32(-0.5) * (want * want * x))
    got = r.outputs["arg1"].reshape(16, 64)
    np.testing.assert_array_equal(got, want)
    if iters:
        np.testing.assert_allclose(got, 1 / np.sqrt(x), rtol=1e-5)


def test_helper_called_per_block_returns_the_first_row_dot():
    nb = 5
    a, b = _x((nb * 8, 32), 3), _x((nb * 8, 32), 4)
    r = _run("k60_call_rowdot_scalars.pto", {"arg0": a, "arg1": b, "arg3": np.zeros(nb, np.float32)}, {"arg4": nb})
    dots = (a.astype(np.float64) * b).sum(1)
    np.testing.assert_allclose(r.outputs["arg2"].ravel(), dots, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(r.outputs["arg3"].ravel(), dots[::8], rtol=1e-5, atol=1e-5)


def test_a5_int8_quantization_rounds_once_through_f16():
    x = _x((16, 64), 5) * np.float32(3)
    x[4, :3] = [1.5, -2.5, 0.0]
    r = _run("k61_a5_quant_i8.pto", {"arg0": x})
    assert r.machine == "a5"
    s = np.abs(x).max(1, keepdims=True) * np.float32(0.007874016)
    np.testing.assert_array_equal(r.outputs["arg2"].reshape(16, 1), s)
    want = np.clip(np.rint((x / s).astype(np.float64)), -128, 127)
    np.testing.assert_array_equal(r.outputs["arg1"].reshape(16, 64), want.astype(np.int8))


@pytest.mark.parametrize("n", [5, 16, 40, 64])
def test_level3_ping_pong_with_a_ragged_tail(n):
    x = _x((n, 64), n)
    r = _run("k62_level3_pingpong_ragged.pto", {"arg0": x}, {"arg2": n})
    assert r.sync_mode == "asis"
    np.testing.assert_array_equal(r.outputs["arg1"].reshape(n, 64), np.maximum(x, 0) + 1)


@pytest.mark.parametrize("n,blocks", [(1, 2), (50, 3), (64, 5)])
def test_spmd_grid_stride_over_a_block_count_that_does_not_divide(n, blocks):
    x = _x((n, 32), n)
    r = _run("k63_spmd_grid_stride_tail.pto", {"arg0": x, "arg1": np.full((n, 32), np.nan, np.float32)},
             {"arg2": n}, blocks)
    np.testing.assert_array_equal(r.outputs["arg1"].reshape(n, 32), x * x - x)


def test_leaky_relu_by_compare_and_select_in_the_generic_form():
    x = _x((16, 64), 6)
    x[0, :4] = 0.0
    r = _run("k64_generic_leaky_relu_select.pto", {"arg0": x})
    np.testing.assert_array_equal(r.outputs["arg1"].reshape(16, 64), np.where(x >= 0, x, np.float32(0.1) * x))


def test_layer_norm_parameter_gradients_by_column_sums():
    dy, xh = _x((48, 64), 7), _x((48, 64), 8)
    r = _run("k65_colsum_ln_grads.pto", {"arg0": dy, "arg1": xh}, {"arg4": 48})
    np.testing.assert_allclose(r.outputs["arg2"].ravel(), (dy.astype(np.float64) * xh).sum(0), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(r.outputs["arg3"].ravel(), dy.astype(np.float64).sum(0), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("kb", [1, 3])
def test_k_loop_matmul_stored_from_l0c_with_relu_into_f16(kb):
    a, b = _x((32, 32 * kb), kb, dtype=np.float16), _x((32 * kb, 32), kb + 10, dtype=np.float16)
    r = _run("k66_gemm_relu_f16_out_nosync.pto", {"arg0": a, "arg1": b}, {"arg3": kb})
    want = np.maximum(a.astype(np.float32) @ b.astype(np.float32), 0)
    got = r.outputs["arg2"].reshape(32, 32)
    assert got.dtype == np.float16
    np.testing.assert_allclose(got.astype(np.float32), want, rtol=1e-3, atol=1e-3 * np.sqrt(32 * kb))


def test_a5_bf16_rms_norm_through_a_helper():
    nb = 3
    x, w = _x((nb * 8, 64), 9, dtype=BF16), _x((1, 64), 10) + np.float32(1)
    r = _run("k67_a5_call_rmsnorm_bf16.pto", {"arg0": x, "arg1": w}, {"arg3": nb})
    xf = x.astype(np.float64)
    want = xf / np.sqrt((xf * xf).mean(1, keepdims=True) + 1e-6) * w
    np.testing.assert_allclose(r.outputs["arg2"].reshape(nb * 8, 64).astype(np.float64), want, rtol=1.6e-2, atol=1e-2)


CLI_CASES = [
    ("k57_generic_row_softmax_dyn_rows.pto", {"arg2": 21}, 1),
    ("k58_memref_quant_i16_rows.pto", {"arg3": 6}, 1),
    ("k59_while_newton_rsqrt.pto", {"arg2": 6}, 1),
    ("k61_a5_quant_i8.pto", {}, 1),
    ("k62_level3_pingpong_ragged.pto", {"arg2": 40}, 1),
    ("k63_spmd_grid_stride_tail.pto", {"arg2": 50}, 3),
    ("k64_generic_leaky_relu_select.pto", {}, 1),
    ("k65_colsum_ln_grads.pto", {"arg4": 48}, 1),
    ("k66_gemm_relu_f16_out_nosync.pto", {"arg3": 3}, 1),
    ("k67_a5_call_rmsnorm_bf16.pto", {"arg3": 3}, 1),
]


@pytest.mark.parametrize("name,args,blocks", CLI_CASES, ids=[c[0][:3] for c in CLI_CASES])
def test_cli_json_cycles_equal_with_and_without_data(name, args, blocks, tmp_path):
    code, with_data = _cli(name, args, blocks, tmp_path)
    assert code == 0, with_data
    code, timing = _cli(name, args, blocks, tmp_path, "--no-data")
    assert code == 0, timing
    assert with_data["findings"] == [] and timing["findings"] == []
    assert timing["cycles"] == with_data["cycles"] > 0
    assert [c["cycles"] for c in timing["cores"]] == [c["cycles"] for c in with_data["cores"]]


def test_no_data_refuses_the_helper_whose_scalar_comes_from_a_tile(tmp_path):
    code, text = _cli("k60_call_rowdot_scalars.pto", {"arg4": 2}, 1, tmp_path, "--no-data")
    assert code == 2 and "k60_call_rowdot_scalars.pto:10:" in text and "Traceback" not in text


def test_select_whose_destination_took_the_scratchs_place_is_refused(tmp_path):
    code, text = _cli("bad41_generic_tsel_dst_is_scratch.pto", {}, 1, tmp_path)
    assert code == 2 and "Traceback" not in text
    assert "bad41_generic_tsel_dst_is_scratch.pto:26:5: pto.tsel: (a, b, dst) have element types (f32, f32, ui32)" in text


def test_yield_of_a_tile_of_another_shape_is_located_at_the_yield(tmp_path):
    code, text = _cli("bad42_yield_tile_of_another_shape.pto", {"arg4": 32}, 1, tmp_path)
    assert code == 2 and "Traceback" not in text
    assert ("bad42_yield_tile_of_another_shape.pto:34:7: scf.yield: value 1 (%a) is a vec 16x64xf32 tile but "
            "scf.for carries a vec 1x64xf32 tile there") in text
