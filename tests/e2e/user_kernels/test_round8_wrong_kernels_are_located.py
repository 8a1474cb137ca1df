"""Eighth red-team round, wrong kernels (tests/e2e/user_kernels/kernels/r8_bad*.pto, the first lines
of each say what is wrong). Each stops with exit 1 (the kernel faulted) or 2 (bad input) and a
message at the culprit's line, on the command line and through ``pyptoemu.run``; never a traceback,
never exit 0 with a number. Found by this round (were exit 0 with a silently wrong result):
r8_bad01 (tfillpad_expand into a smaller tile dropped the rows that did not fit), r8_bad02 (an f32
scalar and-ed into an i32 tile was truncated to an integer) and r8_bad07 (``cmpMod`` for ``cmpMode``
was ignored, so the compare ran as eq)."""

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

# kernel, scalar args, inputs, exit code, "line:col" of the culprit, fragment of its message
CASES = [
    ("r8_bad01_fillpad_expand_into_smaller_tile.pto", {}, {}, 2, "16:5",
     "pto.tfillpad_expand: the source is 16x32 but the destination only 8x32"),
    ("r8_bad02_tands_with_f32_scalar.pto", {}, {}, 2, "16:5",
     "pto.tands: the scalar operand is f32 but the tiles are i32"),
    ("r8_bad03_gemv_store_then_overwrite_acc.pto", {}, {}, 1, "43:5",
     "WAR on L0C bytes [0, 128): tstore (FIX"),
    ("r8_bad04_wait_event_never_recorded.pto", {}, {}, 1, "33:5",
     "wait_flag MTE2->MTE1 EVENT_ID0 - no set_flag of this flag exists in the kernel"),
    ("r8_bad05_load_scalar_past_the_end.pto", {"arg1": 8},
     {"arg0": np.ones(8, np.float32), "arg2": np.zeros(1, np.float32)}, 1, "9:7",
     "pto.load_scalar: element 8 outside arg0"),
    ("r8_bad06_alias_bitcast_missing_vector_barrier.pto", {}, {}, 1, "22:5",
     "RAW on UB bytes [0, 4096): tands (V"),
    ("r8_bad07_cmp_mode_attribute_typo.pto", {}, {}, 2, "26:5",
     "pto.tcmp: unknown attribute 'cmpMod' (did you mean 'cmpMode'?"),
]


@pytest.mark.parametrize(("name", "args", "inputs", "code", "where", "fragment"), CASES, ids=[c[0] for c in CASES])
def test_wrong_kernel_is_located_on_the_command_line(tmp_path, name, args, inputs, code, where, fragment):
    argv = ["run", "-q", str(KERNELS / name), "--output-dir", str(tmp_path / "out")]
    for k, v in args.items():
        argv += ["--arg", f"{k}={v}"]
    for k, v in inputs.items():
        np.save(tmp_path / f"{k}.npy", v)
        argv += ["--input", f"{k}={tmp_path / k}.npy"]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        got = main(argv)
    text = err.getvalue() + out.getvalue()
    assert got == code, text
    assert "Traceback" not in text
    assert f"{name}:{where}" in text and fragment in text, text
    if code == 2:  # refused before running: nothing written
        assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


@pytest.mark.parametrize(("name", "args", "inputs", "code", "where", "fragment"), CASES, ids=[c[0] for c in CASES])
def test_wrong_kernel_raises_from_python(name, args, inputs, code, where, fragment):
    with pytest.raises(PtoError) as info:
        pyptoemu.run(KERNELS / name, inputs=inputs, args=args)
    text = str(info.value) + "".join(f"\n{f}" for f in getattr(info.value, "findings", []))
    assert f"{name}:{where}" in text and fragment in text
    assert isinstance(info.value, pyptoemu.KernelFault) == (code == 1)
