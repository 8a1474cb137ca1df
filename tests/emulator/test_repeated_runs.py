"""Runs of one kernel text in one process parse, synchronise and verify it once (pyptoemu.api keeps
the parse by text): the results are those of a first run, an edited file is read again, and a
kernel the verifier rejects is rejected every time."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pyptoemu
from ptoisa.text.parser import parse_module
from pyptoemu import api
from pyptoemu.errors import InputError
from tests.emulator.core.kernels import binary_kernel, pview, vec

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _adds(n: int) -> str:
    tile = vec(16, 64)
    ops = "\n".join(f"    pto.tadd ins(%t, %t : {tile}, {tile}) outs(%t : {tile})" for _ in range(n))
    return binary_kernel(f"    %t = pto.alloc_tile : {tile}\n"
                         f"    pto.tload ins(%p0 : {pview(16, 64)}) outs(%t : {tile})\n{ops}\n"
                         f"    pto.tstore ins(%t : {tile}) outs(%p1 : {pview(16, 64)})", nargs=2)


def _count(monkeypatch, name: str) -> list:
    calls: list = []
    original = getattr(api, name)

    def counted(*a, **kw):
        calls.append(a[0])
        return original(*a, **kw)

    monkeypatch.setattr(api, name, counted)
    return calls


def test_repeated_runs_parse_and_verify_once_and_give_the_first_runs_results(monkeypatch, tmp_path):
    path = tmp_path / "k.pto"
    path.write_text(_adds(3))
    x = np.arange(16 * 64, dtype=np.float32).reshape(16, 64)
    fresh = pyptoemu.run(parse_module(path.read_text(), str(path)), inputs={"arg0": x})  # a module: no reuse
    parses, verifies = _count(monkeypatch, "parse_module"), _count(monkeypatch, "verify_module")
    runs = [pyptoemu.run(path, inputs={"arg0": x}) for _ in range(3)]
    assert len(parses) == 1 and len(verifies) == 1
    for r in runs:
        assert (r.cycles, r.bound, r.instructions) == (fresh.cycles, fresh.bound, fresh.instructions)
        np.testing.assert_array_equal(r.outputs["arg1"], x * 8)


def test_an_edited_kernel_file_is_read_again(tmp_path):
    path = tmp_path / "k.pto"
    path.write_text(_adds(2))
    x = np.ones((16, 64), dtype=np.float32)
    two = pyptoemu.run(path, inputs={"arg0": x})
    path.write_text(_adds(5))
    five = pyptoemu.run(path, inputs={"arg0": x})
    assert five.pipes["V"].instructions == 5 and two.pipes["V"].instructions == 2
    np.testing.assert_array_equal(five.outputs["arg1"], x * 32)


def test_a_kernel_the_verifier_rejects_is_rejected_every_run(tmp_path):
    bad = _adds(1).replace("pto.tadd ins(%t, %t", "pto.tadd ins(%t, %nope", 1)
    path = tmp_path / "bad.pto"
    path.write_text(bad)
    messages = []
    for _ in range(2):
        with pytest.raises(InputError) as e:
            pyptoemu.run(path)
        messages.append(str(e.value))
    assert messages[0] == messages[1] and "%nope" in messages[0] and f"{path}:" in messages[0]


def test_sync_modes_of_one_text_each_run_their_own_module():
    """The kept synchronisation is per sync mode: serial runs in program order, auto overlaps."""
    kernel = EXAMPLES / "double_buffer_1024.pto"
    x = np.random.default_rng(1).standard_normal((1024, 1024), dtype=np.float32)
    serial = pyptoemu.run(kernel, inputs={"arg0": x}, sync="serial", data=False)
    asis = pyptoemu.run(kernel, inputs={"arg0": x}, data=False)
    serial_again = pyptoemu.run(kernel, inputs={"arg0": x}, sync="serial", data=False)
    assert (serial.sync_mode, asis.sync_mode) == ("serial", "asis")
    assert serial_again.cycles == serial.cycles > asis.cycles


def test_repeated_runs_work_out_what_the_text_decides_once_and_find_the_same(monkeypatch, tmp_path):
    """The alignment warnings, the launch and the race check's access map are kept with the text:
    later runs find the very races and warnings of a first run (a kernel without its sync: the
    load and the add race on the tile)."""
    path = tmp_path / "racy.pto"
    path.write_text(_adds(1))
    fresh = pyptoemu.run(parse_module(path.read_text(), str(path)), sync="asis", races="warn")
    assert any(f.kind == "race" for f in fresh.findings)
    counts = [_count(monkeypatch, name) for name in ("access_map", "plan_launch", "alignment_warnings")]
    runs = [pyptoemu.run(path, sync="asis", races="warn", data=data) for data in (True, False, True)]
    assert [len(c) for c in counts] == [1, 1, 1]
    for r in runs:
        assert [str(f) for f in r.findings] == [str(f) for f in fresh.findings]
        assert r.cycles == fresh.cycles
