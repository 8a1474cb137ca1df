"""Thirteenth red-team round: kernels with mistakes an outside author makes (kernels/r13_bad04..06;
the first lines of each say what is wrong and what the emulator did before). Each is refused before
running with a precise file:line:col message and exit 2, never a traceback, the same way in a
timing-only run (``--no-data``)."""

from __future__ import annotations

import numpy as np
import pytest

import pyptoemu
from pyptoemu.errors import UnsupportedOpError
from tests.e2e.user_kernels.running import KERNELS, cli_json, message_lines


@pytest.mark.parametrize("timing", [False, True])
@pytest.mark.parametrize(("name", "args", "where", "message"), [
    ("r13_bad04_colargmin_into_f32.pto", {}, "27:5", "pto.tcolargmin: dst %ri is f32; this operand is one of i32, ui32"),
    ("r13_bad05_row_argmax_into_f32.pto", {}, "24:5", "pto.trowargmax: dst %a is f32; this operand is one of i32, ui32"),
    ("r13_bad06_view_dim_past_rank.pto", {"arg1": 16}, "11:5", "pto.get_tensor_view_dim: dim 8 of a rank-2 view"),
])
def test_a_wrong_kernel_is_refused_before_running_at_its_line(tmp_path, name, args, where, message, timing):
    code, out = cli_json(name, args, tmp_path, *(["--no-data"] if timing else []))
    assert code == 2, out
    assert "Traceback" not in out, out
    assert any(line.startswith(f"{where}: {message}") for line in message_lines(out, name)), out


@pytest.mark.xfail(strict=True, raises=UnsupportedOpError,
                   reason="pto.subset narrower than its row-major ND (none_box) parent is 'not supported by the "
                          "emulator yet' (core/coreops.py, not editable this session); spec §4.1 restricts only "
                          "boxed tiles to the full column extent")
def test_subset_of_the_column_halves_of_an_nd_tile_runs():
    x = np.random.default_rng(17).standard_normal((16, 64)).astype(np.float32)
    r = pyptoemu.run(KERNELS / "r13_k18_subset_column_halves.pto", inputs={"arg0": x})
    np.testing.assert_allclose(r.outputs["arg1"], np.concatenate([x[:, 32:] * 3, x[:, :32] * 2], axis=1), rtol=1e-6)
