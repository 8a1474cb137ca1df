"""Third red-team round: wrong kernels whose fault depends on a scalar argument or on the target
(tests/e2e/user_kernels/kernels/bad35..bad39): one tile past a UB that two tiles fill exactly, i8 tadd
and f32 -> i8 tcvt on a2a3, a level-3 wait skipped by an i1 argument, full windows stepping past a
ragged n. Each faulty run stops with exit 1 or 2 and a message at the culprit's line and column (CLI
and ``pyptoemu.run``), never a traceback; the same kernel with a harmless argument runs clean.
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import numpy as np
import pytest

import pyptoemu
from pyptoemu.cli import main
from pyptoemu.errors import PtoError

KERNELS = Path(__file__).resolve().parent / "kernels"

CASES = [
    ("bad35_ub_one_tile_past_full.pto", {}, (1, 2), "16:5", "%c needs 512 bytes but UB (vec) has only 0 of 196608"),
    ("bad36_i8_tadd_on_a2a3.pto", {}, 2, "15:5", "pto.tadd: destination element type i8 is not supported"),
    ("bad37_level3_wait_skipped_by_arg.pto", {"arg2": 48, "arg3": "true"}, 1, "29:7",
     "RAW on UB bytes [0, 4096): tmuls (V"),
    ("bad38_window_past_end_for_ragged_n.pto", {"arg2": 40}, 1, "13:7",
     "dim 0 window [32, 48) is outside the view's size 40"),
    ("bad39_tcvt_f32_to_i8_on_a2a3.pto", {}, 2, "16:5", "a2a3 does not convert f32 to i8"),
]


def _cli(name: str, args: dict, tmp_path: Path) -> tuple[int, str]:
    argv = ["run", "-q", str(KERNELS / name), "--output-dir", str(tmp_path / "out")]
    for k, v in args.items():
        argv += ["--arg", f"{k}={v}"]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, err.getvalue() + out.getvalue()


@pytest.mark.parametrize(("name", "args", "code", "where", "fragment"), CASES, ids=[c[0][:5] for c in CASES])
def test_wrong_kernel_stops_at_its_line(name, args, code, where, fragment, tmp_path):
    got, text = _cli(name, args, tmp_path)
    assert got in (code if isinstance(code, tuple) else (code,)), text
    assert "Traceback" not in text and "internal error" not in text
    assert any(fragment in line for line in text.splitlines() if f"{name}:{where}:" in line), text
    api_args = {k: (v == "true" if v in ("true", "false") else v) for k, v in args.items()}
    with pytest.raises(PtoError) as info:
        pyptoemu.run(KERNELS / name, args=api_args)
    assert f"{name}:{where}:" in str(info.value) and fragment in str(info.value)


@pytest.mark.parametrize(("name", "args"), [
    ("bad37_level3_wait_skipped_by_arg.pto", {"arg2": 48, "arg3": False}),
    ("bad38_window_past_end_for_ragged_n.pto", {"arg2": 48}),
])
def test_same_kernel_with_a_harmless_argument_runs_clean(name, args):
    x = np.random.default_rng(37).standard_normal((48, 64)).astype(np.float32)
    r = pyptoemu.run(KERNELS / name, inputs={"arg0": x}, args=args)
    assert r.findings == []
    want = x * 2 if name.startswith("bad37") else x
    np.testing.assert_array_equal(r.outputs["arg1"].reshape(48, 64), want)


INT_MIN = -2**31
# op index, a, b, line:col of the op, message fragment (were: INT_MIN silently, 0 / -1 silently, or an
# internal error "ValueError: negative shift count" for shrsi/shrui by a negative count)
UNDEFINED = [
    (0, INT_MIN, -1, "18:7", "arith.divsi: signed division overflow: the quotient 2147483648 does not fit i32"),
    (1, INT_MIN, -1, "22:7", "arith.floordivsi: signed division overflow"),
    (2, 1, 32, "26:7", "arith.shli: shift amount 32 is outside [0, 32) for i32"),
    (3, -8, -1, "30:7", "arith.shrsi: shift amount -1 is outside [0, 32) for i32"),
    (4, -8, 40, "34:7", "arith.shrui: shift amount 40 is outside [0, 32) for i32"),
]


@pytest.mark.parametrize(("op", "a", "b", "where", "fragment"), UNDEFINED, ids=[str(c[0]) for c in UNDEFINED])
def test_scalar_integer_op_with_an_undefined_result_is_a_located_fault(op, a, b, where, fragment, tmp_path):
    name = "bad40_scalar_int_undefined_results.pto"
    args = {"arg1": a, "arg2": b, "arg3": op}
    got, text = _cli(name, args, tmp_path)
    assert got == 1 and "Traceback" not in text and "internal error" not in text, text
    assert f"{name}:{where}: {fragment}" in text, text
    with pytest.raises(PtoError) as info:
        pyptoemu.run(KERNELS / name, inputs={"arg0": np.zeros(5, np.int32)}, args=args)
    assert f"{name}:{where}: {fragment}" in str(info.value)


@pytest.mark.parametrize(("op", "a", "b", "want"), [
    (0, INT_MIN, 1, INT_MIN), (0, 7, -2, -3), (1, -7, 2, -4), (2, 1, 31, INT_MIN), (3, -8, 31, -1),
    (4, -8, 1, 2**31 - 4),
])
def test_the_same_ops_at_the_edge_of_defined_give_the_exact_value(op, a, b, want):
    r = pyptoemu.run(KERNELS / "bad40_scalar_int_undefined_results.pto", inputs={"arg0": np.zeros(5, np.int32)},
                     args={"arg1": a, "arg2": b, "arg3": op})
    assert r.findings == [] and int(r.outputs["arg0"][op]) == want
