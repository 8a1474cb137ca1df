"""Third red-team round: valid kernels in the forms the whole-module verifier must not reject
(tests/e2e/user_kernels/kernels/k43..k56): one SSA name defined in sibling loops, branches, while
regions and functions; tiles yielded out of branches; values carried by iter_args and returned by
calls; level-3 addresses picked at run time at the end of UB; memref-level windows with generic-form
ops; tiles that fill UB exactly; a depth-1 FIFO; 100 blocks in waves; i32 and i8 at their limits; tcvt
with every rounding mode. Each runs through ``pyptoemu.run`` and the CLI, matches NumPy, reports no
finding, and (where it reads no data into scalars) gives the same cycles with ``--no-data``.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import numpy as np
import pytest

import pyptoemu
from pyptoemu.cli import main

KERNELS = Path(__file__).resolve().parent / "kernels"
I32 = np.iinfo(np.int32)


def _run(name: str, **kw):
    r = pyptoemu.run(KERNELS / name, **kw)
    assert [str(f) for f in r.findings] == []
    return r


def _cli_json(name: str, args: dict, blocks: int, tmp_path: Path, *extra: str) -> tuple[int, dict | str]:
    argv = ["run", str(KERNELS / name), "--json", "--output-dir", str(tmp_path / "out"), "--blocks", str(blocks)]
    for k, v in args.items():
        argv += ["--arg", f"{k}={v}"]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([*argv, *extra])
    text = out.getvalue()
    return code, (json.loads(text) if code == 0 else err.getvalue() + text)


def _x(shape, seed=0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("n", [8, 32])
def test_sibling_loops_define_the_same_names(n):
    x = _x((n, 64), 1)
    r = _run("k43_sibling_loops_same_names.pto", inputs={"arg0": x}, args={"arg3": n})
    np.testing.assert_allclose(r.outputs["arg1"].reshape(n, 64), x + 3, rtol=1e-6)
    np.testing.assert_allclose(r.outputs["arg2"][0], (x[::8, 0] + 3).sum(), rtol=1e-5)


def test_helper_called_twice_with_the_callers_names():
    x = _x((32, 64), 2)
    r = _run("k44_call_helper_same_names.pto", inputs={"arg0": x})
    np.testing.assert_array_equal(r.outputs["arg1"].reshape(32, 64), x * np.float32(3))


@pytest.mark.parametrize("n", [8, 24, 40])
def test_if_branches_yield_tiles_of_one_name(n):
    x = _x((n, 64), 3)
    r = _run("k45_if_yields_tiles_named_alike.pto", inputs={"arg0": x}, args={"arg2": n})
    even = (np.arange(n) // 8 % 2 == 0)[:, None]
    np.testing.assert_array_equal(r.outputs["arg1"].reshape(n, 64), np.where(even, x * 2, x - 1))


@pytest.mark.parametrize("n", [16, 48])
def test_level3_address_chosen_at_run_time_up_to_the_end_of_ub(n):
    x = _x((n, 64), 4)
    r = _run("k46_level3_select_addr_ub_edge.pto", inputs={"arg0": x}, args={"arg2": n})
    assert r.sync_mode == "asis"
    np.testing.assert_array_equal(r.outputs["arg1"].reshape(n, 64), x * 2)


@pytest.mark.parametrize("nb", [1, 11])
def test_c2v_fifo_pushed_and_popped_in_loops(nb):
    rng = np.random.default_rng(5)
    a = rng.standard_normal((16 * nb, 32)).astype(np.float16)
    b = rng.standard_normal((32, 32)).astype(np.float16)
    r = _run("k47_c2v_loop_pop_free.pto", inputs={"arg0": a, "arg1": b}, args={"arg3": nb})
    ref = a.astype(np.float32) @ b.astype(np.float32) + 1
    np.testing.assert_allclose(r.outputs["arg2"].reshape(-1, 32), ref, rtol=1e-5, atol=1e-5 * 32)


@pytest.mark.parametrize("n", [1, 6])
def test_l2l_pipe_of_depth_one(n):
    rng = np.random.default_rng(6)
    x = rng.standard_normal((32 * n, 32)).astype(np.float32)
    w = rng.standard_normal((32, 32)).astype(np.float16)
    r = _run("k48_v2c_l2l_depth1.pto", inputs={"arg0": x, "arg1": w}, args={"arg3": n})
    ref = x.astype(np.float16).astype(np.float32) @ w.astype(np.float32)
    np.testing.assert_allclose(r.outputs["arg2"].reshape(-1, 32), ref, rtol=1e-5, atol=1e-5 * 32)


def test_one_hundred_blocks_run_in_waves_with_a_ragged_tail():
    n = 795
    x = _x((n, 32), 7)
    r = _run("k49_spmd_100_blocks_waves.pto", inputs={"arg0": x}, args={"arg2": n}, blocks=100)
    scale = (np.arange(n) // 8 + 1).astype(np.float32)[:, None]
    np.testing.assert_array_equal(r.outputs["arg1"].reshape(n, 32), x * scale)
    blocks = sorted(b for c in r.cores for b in c.blocks)
    assert blocks == list(range(100))
    assert len(r.cores) == 48 and max(len(c.blocks) for c in r.cores) == 3  # waves on the 48 AIVs


@pytest.mark.parametrize("n", [8, 40, 44])
def test_while_regions_define_the_same_names(n):
    x = _x((n, 16), 8)
    r = _run("k50_while_regions_same_names.pto", inputs={"arg0": x}, args={"arg2": n})
    full = n // 8 * 8
    np.testing.assert_allclose(r.outputs["arg1"].reshape(8, 16), x[:full].reshape(-1, 8, 16).sum(0), rtol=1e-5,
                               atol=1e-6)


def test_two_tiles_fill_ub_exactly():
    x = _x((48, 512), 9)
    r = _run("k51_ub_exact_capacity.pto", inputs={"arg0": x})
    np.testing.assert_array_equal(r.outputs["arg1"].reshape(48, 512), x + x)


def test_i32_at_its_limits_wraps_in_atomic_adds_over_64_blocks_and_in_tadd():
    x = np.array([I32.max, I32.min, 2**30, -1, 0, 1, 123456789, -987654321] * 16, np.int32).reshape(8, 16)
    r = _run("k52_i32_limits_atomic_64_blocks.pto", inputs={"arg0": x, "arg1": np.zeros((8, 16), np.int32)},
             blocks=64)

    def wrap(v):
        return ((v + 2**31) % 2**32 - 2**31).astype(np.int32)

    np.testing.assert_array_equal(r.outputs["arg1"].reshape(8, 16), wrap(x.astype(np.int64) * 64))
    np.testing.assert_array_equal(r.outputs["arg2"].reshape(8, 16), wrap(x.astype(np.int64) * 2))


@pytest.mark.parametrize("nb", [1, 8])
def test_memref_windows_in_sibling_loops_with_generic_form_ops(nb):
    x = _x(512, 10)
    r = _run("k53_memref_loops_generic_ops.pto", inputs={"arg0": x, "arg1": np.full(512, 7, np.float32)},
             args={"arg2": nb})
    ref = np.full(512, 7, np.float32)
    ref[:64 * nb] = x[:64 * nb] * np.float32(0.5) - x[:64 * nb]
    np.testing.assert_array_equal(r.outputs["arg1"], ref)


def test_calls_returning_values_inside_a_loop_with_iter_args():
    x = _x((40, 16), 11)
    r = _run("k54_call_with_result_in_loop.pto", inputs={"arg0": x}, args={"arg2": 5})
    np.testing.assert_allclose(r.outputs["arg1"][0], (x[::8, 0] * 2).sum(), rtol=1e-6)


def test_a5_i8_tadd_wraps_and_the_a5_module_refuses_a_forced_a2a3(tmp_path):
    x = np.arange(-128, 128, dtype=np.int8).reshape(8, 32)
    r = _run("k55_a5_i8_tadd_wraps.pto", inputs={"arg0": x})
    np.testing.assert_array_equal(r.outputs["arg1"].reshape(8, 32), (x.astype(np.int16) * 2).astype(np.int8))
    code, text = _cli_json("k55_a5_i8_tadd_wraps.pto", {}, 1, tmp_path, "--machine", "a2a3")
    assert code == 2 and "k55_a5_i8_tadd_wraps.pto:2:1:" in text and "Traceback" not in text


MODES = ["RINT", "ROUND", "FLOOR", "CEIL", "TRUNC", "ODD", "NONE"]
CVT_IN = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.7, -3.7, 40000.0, -40000.0, 1 + 2**-11, 1 + 3 * 2**-11,
                   70000.0, 2.0**-30, 1e10, -1e10], np.float32)


def _to_int(x: np.ndarray, mode: str) -> np.ndarray:
    x = x.astype(np.float64)
    lo, hi = np.floor(x), np.ceil(x)
    return {"RINT": np.rint(x), "ROUND": np.sign(x) * np.floor(np.abs(x) + 0.5), "FLOOR": lo, "CEIL": hi,
            "TRUNC": np.trunc(x), "NONE": np.trunc(x),
            "ODD": np.where(lo == hi, lo, np.where(lo % 2 != 0, lo, hi))}[mode]


def _to_f16(x: np.ndarray, mode: str) -> np.ndarray:
    """The f16 neighbours lo <= x <= hi, picked by the mode (nearest modes overflow to inf as IEEE does)."""
    with np.errstate(over="ignore"):
        near = x.astype(np.float16)
    up = near.astype(np.float32) > x
    lo = np.where(up, np.nextafter(near, np.float16(-np.inf)), near)
    hi = np.where(up, near, np.where(near.astype(np.float32) == x, near, np.nextafter(near, np.float16(np.inf))))
    if mode in ("RINT", "NONE"):
        return near
    if mode == "ROUND":
        dlo, dhi = x - lo.astype(np.float32), hi.astype(np.float32) - x
        away = np.where(x > 0, hi, lo)
        return np.where(np.abs(x) >= 65520, near, np.where(dlo < dhi, lo, np.where(dhi < dlo, hi, away)))
    if mode == "ODD":
        return np.where(lo == hi, lo, np.where(lo.view(np.uint16) & 1, lo, hi))
    return {"FLOOR": lo, "CEIL": hi, "TRUNC": np.where(x > 0, lo, hi)}[mode]


def test_tcvt_every_rounding_mode_to_f16_i16_saturated_and_i32():
    r = _run("k56_tcvt_every_rmode.pto", inputs={"arg0": CVT_IN})
    h, s, w = (r.outputs[k].reshape(7, 16) for k in ("arg1", "arg2", "arg3"))
    for i, mode in enumerate(MODES):
        ints = _to_int(CVT_IN, mode)
        np.testing.assert_array_equal(s[i], np.clip(ints, -32768, 32767).astype(np.int16), err_msg=mode)
        np.testing.assert_array_equal(w[i], np.clip(ints, I32.min, I32.max).astype(np.int32), err_msg=mode)
        np.testing.assert_array_equal(h[i], _to_f16(CVT_IN, mode), err_msg=mode)


@pytest.mark.parametrize(("name", "args", "blocks"), [
    ("k44_call_helper_same_names.pto", {}, 1),
    ("k45_if_yields_tiles_named_alike.pto", {"arg2": 40}, 1),
    ("k46_level3_select_addr_ub_edge.pto", {"arg2": 48}, 1),
    ("k47_c2v_loop_pop_free.pto", {"arg3": 5}, 1),
    ("k48_v2c_l2l_depth1.pto", {"arg3": 4}, 1),
    ("k49_spmd_100_blocks_waves.pto", {"arg2": 795}, 100),
    ("k53_memref_loops_generic_ops.pto", {"arg2": 3}, 1),
])
def test_cli_json_cycles_equal_with_and_without_data(name, args, blocks, tmp_path):
    code, with_data = _cli_json(name, args, blocks, tmp_path)
    assert code == 0, with_data
    code, timing = _cli_json(name, args, blocks, tmp_path, "--no-data")
    assert code == 0, timing
    assert with_data["findings"] == [] and timing["findings"] == []
    assert timing["cycles"] == with_data["cycles"] > 0
    assert [c["cycles"] for c in timing["cores"]] == [c["cycles"] for c in with_data["cores"]]


def test_no_data_refuses_a_kernel_that_reads_tile_values_into_scalars(tmp_path):
    code, text = _cli_json("k43_sibling_loops_same_names.pto", {"arg3": 32}, 1, tmp_path, "--no-data")
    assert code == 2 and "k43_sibling_loops_same_names.pto:30:7:" in text and "Traceback" not in text
