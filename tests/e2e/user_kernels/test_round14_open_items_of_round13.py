"""Fourteenth red-team round, items left open by round 13.

``scf.for`` bounds (pto-text-format §3.2: "lb, ub, step are index (an integer type may be given with
a trailing ``: i32``)"): a loop over i32 values written without the trailing type was run, its
counter an index, while everywhere else an integer of one width never stands for another (the
arith ops, view offsets, tile addresses); and a loop written ``: i32`` still gave an index counter,
so the counter could not be used as the i32 it is (an ``arith.addi ... : i32`` on it was refused)
and could be used as an index without a cast. Now the bounds have the loop's type and so does the
counter."""

from __future__ import annotations

import numpy as np
import pytest

from tests.e2e.user_kernels.running import cli_json, message_lines, run_clean_twice


def test_a_loop_written_over_i32_counts_in_i32():
    x = np.random.default_rng(1).standard_normal((24, 32)).astype(np.float32)
    r = run_clean_twice("r14_k01_for_typed_i32_block_rows.pto", {"arg0": x}, {"arg2": 3})
    want = x * np.repeat(np.arange(1, 4, dtype=np.float32), 8)[:, None]
    np.testing.assert_array_equal(r.outputs["arg1"], want)


@pytest.mark.parametrize("timing", [False, True])
@pytest.mark.parametrize(("name", "where", "message"), [
    ("r14_bad01_for_i32_bounds_untyped.pto", "16:5",
     ("scf.for: the lower bound %z is i32, but a loop's bounds are index (arith.index_cast it first, or write "
      "the loop for i32: 'scf.for ... step ... : i32')")),
    ("r14_bad02_for_typed_i32_index_step.pto", "16:5",
     "scf.for: the step %c1 is index, but the loop is written for i32 (': i32': its bounds and step are i32)"),
    ("r14_bad03_i32_counter_used_as_index.pto", "17:7",
     "arith.addi: operand %b is i32 but the op is written for index"),
    ("r14_bad08_for_written_f32.pto", "16:5", "scf.for: a loop counts in index or an integer type, not f32"),
])
def test_a_loop_bound_or_counter_of_the_wrong_width_is_refused_at_its_line(tmp_path, name, where, message, timing):
    code, out = cli_json(name, {"arg2": 3}, tmp_path, *(["--no-data"] if timing else []))
    assert code == 2, out
    assert "Traceback" not in out, out
    assert any(line.startswith(f"{where}: {message}") for line in message_lines(out, name)), out


def test_a_tile_form_loop_written_over_i32_counts_in_i32():
    """The tile-level verifier gave the counter of an ': i32' loop the type index too ('pto.addi' op
    operand %b has type index, expected i32)."""
    x = np.random.default_rng(2).standard_normal((64, 32)).astype(np.float32)
    r = run_clean_twice("r14_k02_tile_form_for_over_i32.pto", {"arg0": x}, {"arg2": 3})
    want = x[:48] + np.repeat(np.arange(1, 4, dtype=np.float32), 16)[:, None]
    np.testing.assert_array_equal(r.outputs["arg1"][:48], want)
