"""Files a user hands the command line by mistake (empty, binary garbage, a pickle, a control
character in a machine YAML) are bad input: exit 2 with a located message, never an internal error."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from pyptoemu.cli import main

ROOT = Path(__file__).resolve().parents[2]
VADD = str(ROOT / "examples" / "vadd_32x32.pto")
GARBAGE = bytes(range(0xC0, 0x100)) * 40


def _no_target(tmp_path: Path) -> str:
    """vadd without a pto.target_arch, so --machine may name any file."""
    path = tmp_path / "vadd_any_machine.pto"
    path.write_text(Path(VADD).read_text().replace('pto.target_arch = "a3"', ""))
    return str(path)


@pytest.mark.parametrize("content", [b"", GARBAGE, b"\x80\x03]q\x00."], ids=["empty", "garbage", "pickle"])
@pytest.mark.parametrize("flag", ["--input", "--expect"])
def test_a_file_that_is_not_npy_is_bad_input(tmp_path, capsys, content, flag):
    bad = tmp_path / "bad.npy"
    bad.write_bytes(content)
    arg = "arg0" if flag == "--input" else "arg2"
    code = main(["run", VADD, flag, f"{arg}={bad}", "-q", "--output-dir", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "not a .npy file" in err
    assert "internal error" not in err


def test_an_object_array_npy_is_refused_as_objects(tmp_path, capsys):
    bad = tmp_path / "objects.npy"
    np.save(bad, np.array([object()], dtype=object), allow_pickle=True)
    code = main(["run", VADD, "--expect", f"arg2={bad}", "-q", "--output-dir", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2
    assert "holds Python objects" in err


def test_a_binary_machine_file_is_bad_input(tmp_path, capsys):
    machine = tmp_path / "m.yaml"
    machine.write_bytes(GARBAGE)
    code = main(["run", _no_target(tmp_path), "--machine", str(machine), "-q", "--no-data"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert f"{machine}:1:1: the file is not UTF-8" in err


def test_a_control_character_in_a_machine_file_is_located(tmp_path, capsys):
    machine = tmp_path / "m.yaml"
    machine.write_bytes(b"name: a2a3\ndescription: a\x01b\n")
    code = main(["run", _no_target(tmp_path), "--machine", str(machine), "-q", "--no-data"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert f"{machine}:2:15: invalid YAML: character U+0001 is not allowed" in err


def _trace(tmp_path: Path, capsys) -> dict:
    path = tmp_path / "t.json"
    assert main(["run", VADD, "-q", "--no-data", "--trace", str(path)]) == 0
    capsys.readouterr()
    return json.loads(path.read_text())


@pytest.mark.parametrize(("edit", "said"), [
    (lambda t, x: x.update(ts="a"), ".ts is 'a', not a non-negative number"),
    (lambda t, x: x.update(dur=None), ".dur is None, not a non-negative number"),
    (lambda t, x: x.update(dur=-5), ".dur is -5, not a non-negative number"),
    (lambda t, x: x.update(args=[1]), ".args is not an object"),
    (lambda t, x: x["args"].update(line=[1]), ".args.line is not a file:line:col string"),
    (lambda t, x: t["traceEvents"].append(5), "] is int, not an event object"),
    (lambda t, x: t["otherData"].update(cycles="x"), "otherData.cycles is 'x', not a non-negative number"),
], ids=["ts-text", "dur-null", "dur-negative", "args-list", "line-list", "event-int", "cycles-text"])
def test_a_malformed_trace_is_bad_input_naming_the_field(tmp_path, capsys, edit, said):
    trace = _trace(tmp_path, capsys)
    slice_ = next(e for e in trace["traceEvents"] if e.get("ph") == "X")
    edit(trace, slice_)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(trace))
    code = main(["report", str(bad)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert said in err
    assert "internal error" not in err


def test_sigterm_mid_trace_leaves_no_temporary_file(tmp_path):
    """A run killed by SIGTERM while its trace streams out exits 143 and removes the half-written
    temporary (it stayed behind, 1.7 GB after ten minutes of a 4000-block run)."""
    traces = tmp_path / "traces"
    cmd = [sys.executable, "-m", "pyptoemu.cli", "run", str(ROOT / "examples" / "double_buffer_1024.pto"),
           "--blocks", "4000", "--races", "off", "--no-data", "-q", "--trace", str(traces / "t.json")]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=tmp_path)
    try:
        deadline = time.monotonic() + 60
        while not (traces.is_dir() and any(traces.iterdir())) and time.monotonic() < deadline:
            assert proc.poll() is None, proc.stderr.read()
            time.sleep(0.05)
        assert any(traces.iterdir()), "the trace never started streaming"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 143
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert list(traces.iterdir()) == []


def test_arg_for_a_pointer_says_it_is_a_pointer(tmp_path, capsys):
    """`--arg arg0=3` on a pointer said 'no argument arg0 (it takes arg0..arg2)': a contradiction."""
    code = main(["run", VADD, "--arg", "arg0=3", "-q", "--no-data"])
    err = capsys.readouterr().err
    assert code == 2
    assert "arg0 of @vadd is a pointer" in err
    assert "--input arg0=FILE.npy" in err


def test_args_for_two_pointers_say_they_are_pointers(capsys):
    """Two pointers given by --arg: one sentence in the plural (red team 13: 'arg0, arg1 ... is a pointer')."""
    code = main(["run", VADD, "--arg", "arg0=3", "--arg", "arg1=4", "-q", "--no-data"])
    err = capsys.readouterr().err
    assert code == 2
    assert "arg0, arg1 of @vadd are pointers: --arg sets scalars; give their data with --input arg0=FILE.npy" in err


@pytest.mark.parametrize("flag", ["--input", "--expect"])
def test_the_same_argument_given_twice_is_refused(tmp_path, capsys, flag):
    """Two `--input arg0=...` ran silently with the last one."""
    a, b = tmp_path / "a.npy", tmp_path / "b.npy"
    np.save(a, np.ones((32, 32), np.float32))
    np.save(b, np.zeros((32, 32), np.float32))
    code = main(["run", VADD, flag, f"arg0={a}", flag, f"arg0={b}", "-q", "--no-data"])
    err = capsys.readouterr().err
    assert code == 2
    assert f"{flag} arg0 is given twice" in err


def test_report_top_negative_is_refused(tmp_path, capsys):
    """`--top -1` printed 'top -1 of 8' and then seven lines (a slice from the end)."""
    path = tmp_path / "t.json"
    assert main(["run", VADD, "-q", "--no-data", "--trace", str(path)]) == 0
    capsys.readouterr()
    assert main(["report", str(path), "--top", "-1"]) == 2
    assert "--top must be 0 or more, got -1" in capsys.readouterr().err
    assert main(["report", str(path), "--top", "0"]) == 0
    assert "top 0 of " in capsys.readouterr().out


def test_expect_with_no_data_is_refused_as_such(tmp_path, capsys):
    """It said 'the kernel did not write arg2 (outputs: none)' after running."""
    ref = tmp_path / "want.npy"
    np.save(ref, np.zeros((32, 32), np.float32))
    assert main(["run", VADD, "--no-data", "--expect", f"arg2={ref}", "-q"]) == 2
    assert "--expect compares computed values and --no-data computes none" in capsys.readouterr().err
