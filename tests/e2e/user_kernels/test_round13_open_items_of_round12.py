"""Thirteenth red-team round: the gaps round 12 left open (kernels/r13_bad*, r13_k01; the first lines
of each kernel say what is wrong and what the emulator did before). What the text alone decides is
refused before running (exit 2, file:line:col), with data and timing-only alike."""

from __future__ import annotations

import time

import numpy as np
import pytest

import pyptoemu
from pyptoemu.errors import PtoError
from tests.e2e.user_kernels.running import KERNELS, cli_json, message_lines


@pytest.mark.parametrize("timing", [False, True])
@pytest.mark.parametrize(("name", "where", "message"), [
    ("r13_bad01_block_idx_as_offset_uncast.pto", "14:5",
     ("pto.partition_view: 'offsets' (%b) is i64; shapes, strides, offsets, valid sizes and event ids are index "
      "(convert it first, e.g. arith.index_cast %b : i64 to index)")),
    ("r13_bad02_while_state_never_changes.pto", "8:5",
     ("scf.while never ends: its after region yields its arguments unchanged, so every iteration computes the "
      "condition %p from the same constants, and it is true")),
])
def test_what_the_text_decides_is_refused_before_running(tmp_path, name, where, message, timing):
    start = time.monotonic()
    code, out = cli_json(name, {}, tmp_path, *(["--no-data"] if timing else []))
    assert time.monotonic() - start < 60  # was about 47 s for the endless loop, at the step limit
    assert code == 2, out
    assert "Traceback" not in out, out
    assert any(line.startswith(f"{where}: {message}") for line in message_lines(out, name)), out


def test_a_block_id_cast_to_index_is_an_offset(tmp_path):
    """The corrected kernel: get_block_idx through arith.index_cast scales the row offset."""
    x = np.arange(128, dtype=np.float32).reshape(16, 8)
    r = pyptoemu.run(KERNELS / "r13_k01_block_idx_cast_to_offset.pto", inputs={"arg0": x}, blocks=2)
    assert [str(f) for f in r.findings] == []
    np.testing.assert_array_equal(r.outputs["arg1"], x)
    timing = pyptoemu.run(KERNELS / "r13_k01_block_idx_cast_to_offset.pto", blocks=2, data=False)
    assert timing.cycles == r.cycles and [str(f) for f in timing.findings] == []


def _while_kernel(init: str, extra_arg: str = "") -> str:
    return f"""module {{
  func.func @spin(%x: !pto.ptr<f32>{extra_arg}) attributes {{pto.kernel_kind = #pto.kernel_kind<vector>}} {{
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %w = scf.while (%i = {init}) : (index) -> index {{
      %p = arith.cmpi slt, %i, %c4 : index
      scf.condition(%p) %i : index
    }} do {{
    ^bb0(%i2: index):
      scf.yield %i2 : index
    }}
    return
  }}
}}
"""


def test_the_same_loop_entered_with_its_condition_false_runs():
    """Only a condition true on entry makes the unchanging loop endless: entered at 4 it ends at once."""
    r = pyptoemu.run(_while_kernel("%c4"), data=False)
    assert [str(f) for f in r.findings] == []


def test_the_same_loop_entered_with_a_run_time_value_is_left_to_the_run():
    """Entered with an argument, only the run knows: n = 4 ends at once, n = 0 stops at the step limit."""
    text = _while_kernel("%n", ", %n: index")
    assert [str(f) for f in pyptoemu.run(text, args={"arg1": 4}, data=False).findings] == []
    with pytest.raises(PtoError, match="more than 1000 loop iterations"):
        pyptoemu.run(text, args={"arg1": 0}, data=False, max_steps=1000)


def test_a_loop_that_advances_its_counter_is_not_refused():
    """The loop of r13_bad02 with the increment written: four iterations, no finding."""
    text = _while_kernel("%c0").replace(
        "      scf.yield %i2 : index",
        "      %c1 = arith.constant 1 : index\n      %n2 = arith.addi %i2, %c1 : index\n      scf.yield %n2 : index")
    assert [str(f) for f in pyptoemu.run(text, data=False).findings] == []


@pytest.mark.parametrize("data", [True, False])
def test_an_unknown_attribute_of_a_tile_op_is_a_located_warning(data):
    x = np.arange(64, dtype=np.float32).reshape(8, 8)
    r = pyptoemu.run(KERNELS / "r13_bad03_unknown_attribute_on_tile_op.pto", inputs={"arg0": x} if data else None,
                     data=data)
    (w,) = r.findings
    assert (w.kind, w.severity) == ("ignored", "warning")
    assert (w.locations[0].line, w.locations[0].col) == (13, 5)
    assert w.message == "pto.tadd: attribute 'saturate' is not one of this op's (it takes none); ignored"
    if data:
        np.testing.assert_array_equal(r.outputs["arg0"], 2 * x)
