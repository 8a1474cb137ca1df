"""Fourteenth red-team round: kernels with mistakes an outside author makes (kernels/r14_bad04..; the
first lines of each say what is wrong and what the emulator did before). Each is refused before
running with a precise file:line:col message and exit 2, never a traceback, the same way in a
timing-only run (``--no-data``)."""

from __future__ import annotations

import pytest

from tests.e2e.user_kernels.running import cli_json, message_lines


@pytest.mark.parametrize("timing", [False, True])
@pytest.mark.parametrize(("name", "args", "where", "message"), [
    ("r14_bad04_scratch_tile_u8_for_ui8.pto", {}, "18:48",
     "invalid shape '16x32xu8': 'u8' is not an element type (did you mean ui8?)"),
    ("r14_bad05_pointer_of_fp32.pto", {}, "4:31",
     "expected an element type like f32: 'fp32' is not an element type (did you mean f32?)"),
    ("r14_bad06_gather_index_tile_f32.pto", {}, "22:5", "pto.tgather: idx %ti is f32; this operand is one of i32, ui32"),
    ("r14_bad07_scatter_index_tile_f32.pto", {}, "22:5",
     "pto.tscatter: idx %ti is f32; this operand is one of i16, i32, ui16, ui32"),
])
def test_a_wrong_kernel_is_refused_before_running_at_its_line(tmp_path, name, args, where, message, timing):
    code, out = cli_json(name, args, tmp_path, *(["--no-data"] if timing else []))
    assert code == 2, out
    assert "Traceback" not in out, out
    assert any(line.startswith(f"{where}: {message}") for line in message_lines(out, name)), out
