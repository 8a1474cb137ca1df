"""The command line behaves like a conventional tool: help everywhere, options on either side of the
kernel, "did you mean", quiet ends on OS errors and closed pipes, faulted runs that still report,
outputs written atomically and never through symlinks, ``--expect`` comparisons."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.emulator.test_result_and_faults import DEAD, OVERFLOW

ROOT = Path(__file__).resolve().parents[2]
VADD = ROOT / "examples" / "vadd_32x32.pto"


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pyptoemu", *args], check=False, capture_output=True, text=True,
                          cwd=cwd or ROOT, timeout=300)


def _inputs(tmp_path: Path) -> list[str]:
    np.save(tmp_path / "x.npy", np.full((32, 32), 2.0, np.float32))
    np.save(tmp_path / "y.npy", np.full((32, 32), 3.0, np.float32))
    return ["--input", f"arg0={tmp_path / 'x.npy'}", "--input", f"arg1={tmp_path / 'y.npy'}"]


def _parsers(parser: argparse.ArgumentParser, path=("pyptoemu",)):
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from _parsers(child, (*path, name))


def test_every_option_and_subcommand_has_help_with_an_example():
    from pyptocli import COMPILE

    from pyptoemu.cli import build_parser

    seen = []
    for path, parser in _parsers(build_parser(extra=(COMPILE,))):
        seen.append(" ".join(path))
        assert "example" in (parser.epilog or ""), path
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                assert all(a.help for a in action._choices_actions), path
            elif not isinstance(action, (argparse._HelpAction, argparse._VersionAction)):
                assert action.help, (path, action.dest)
    assert {"pyptoemu run", "pyptoemu report", "pyptoemu isa show", "pyptoemu compile"} <= set(seen)
    top = cli("--help")
    assert top.returncode == 0 and "examples:" in top.stdout
    assert cli("--version").stdout.startswith("pyptoemu ")


def test_options_before_and_after_the_kernel_and_trace_before_it(tmp_path):
    r = cli("run", "--json", "--trace", str(VADD), "--output-dir", str(tmp_path / "o"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["trace"] == str(Path("traces") / "vadd_32x32.json")
    assert (tmp_path / "traces" / "vadd_32x32.json").exists()
    after = cli("run", str(VADD), "--output-dir", str(tmp_path / "o2"), "--json", "--seed", "3")
    assert after.returncode == 0 and json.loads(after.stdout)["status"] == "ok"


@pytest.mark.parametrize("args, hint", [
    (["isa", "show", "TADDD"], "did you mean 'tadd'"),
    (["isa", "--machine", "a2a2", "list"], "did you mean 'a2a3'"),
    (["run", str(VADD), "--entry", "vad"], "did you mean 'vadd'"),
])
def test_did_you_mean(args, hint, tmp_path):
    r = cli(*args, "--output-dir", str(tmp_path)) if args[0] == "run" else cli(*args)
    assert r.returncode == 2 and hint in r.stderr and "Traceback" not in r.stderr


def test_unknown_op_suggests_the_close_one(tmp_path):
    k = tmp_path / "typo.pto"
    k.write_text(VADD.read_text().replace("pto.tadd ins", "pto.tadds_x ins").replace("pto.tadds_x", "pto.tad"))
    r = cli("run", str(k), "--output-dir", str(tmp_path))
    assert r.returncode == 2 and "did you mean" in r.stderr and "'pto.tadd'" in r.stderr


@pytest.mark.parametrize("make_args", [
    lambda t: ["run", str(VADD), "--output-dir", "/proc/no_such_dir"],
    lambda t: ["run", str(VADD), "--trace", str(t), "--output-dir", str(t)],
    lambda t: ["sync", str(VADD), "-o", str(t)],
])
def test_os_errors_end_quietly_with_exit_2(make_args, tmp_path):
    r = cli(*make_args(tmp_path))
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "cannot write" in r.stderr and "Traceback" not in r.stderr


def test_compile_into_a_file_path_ends_quietly_with_exit_2(tmp_path):
    target = tmp_path / "not_a_dir"
    target.write_text("")
    r = subprocess.run([sys.executable, "-m", "pyptocli", "compile", str(ROOT / "examples" / "tile_add.py"), "-o",
                        str(target)], check=False, capture_output=True, text=True, timeout=300)
    assert r.returncode == 2 and str(target) in r.stderr and "Traceback" not in r.stderr


def test_an_input_that_is_a_fifo_is_refused_not_waited_on(tmp_path):
    fifo = tmp_path / "in.npy"
    os.mkfifo(fifo)
    r = cli("run", str(VADD), "--input", f"arg0={fifo}", "--output-dir", str(tmp_path))
    assert r.returncode == 2 and "not a regular file" in r.stderr


def test_broken_pipe_ends_quietly_with_exit_2():
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first line, like `| head -0`
    try:
        proc = subprocess.run([sys.executable, "-m", "pyptoemu", "isa", "list"], stdout=write_end,
                              stderr=subprocess.PIPE, cwd=ROOT, check=False, timeout=120)
    finally:
        os.close(write_end)
    err = proc.stderr.decode()
    assert proc.returncode == 2, err
    assert "broken pipe" in err and "Traceback" not in err


def test_faulted_run_prints_full_json_and_trace(tmp_path):
    k = tmp_path / "dead.pto"
    k.write_text(DEAD)
    r = cli("run", str(k), "--json", "--trace", str(tmp_path / "t.json"), "--output-dir", str(tmp_path / "o"))
    assert r.returncode == 1
    doc = json.loads(r.stdout)
    assert doc["status"] == "faulted" and set(doc["pipes"]) == {"S", "MTE1", "MTE2", "MTE3", "V", "M", "FIX"}
    assert [f["kind"] for f in doc["findings"]] == ["wait-never-set", "deadlock"]
    assert doc["trace"] == str(tmp_path / "t.json") and (tmp_path / "t.json").exists()
    assert "deadlock" in r.stderr


def test_fault_removes_the_previous_runs_outputs(tmp_path):
    k = tmp_path / "k.pto"
    k.write_text(VADD.read_text())
    out = tmp_path / "o"
    assert cli("run", str(k), "--output-dir", str(out), *_inputs(tmp_path)).returncode == 0
    assert (out / "arg2.npy").exists()
    k.write_text(OVERFLOW)
    r = cli("run", str(k), "--output-dir", str(out), *_inputs(tmp_path))
    assert r.returncode == 1 and "capacity" in r.stdout
    assert not (out / "arg2.npy").exists()


def test_outputs_never_follow_a_planted_symlink(tmp_path):
    out = tmp_path / "o"
    out.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    (out / "arg2.npy").symlink_to(victim)
    r = cli("run", str(VADD), "--output-dir", str(out), *_inputs(tmp_path))
    assert r.returncode == 0, r.stderr
    assert victim.read_text() == "precious"
    assert not (out / "arg2.npy").is_symlink() and np.all(np.load(out / "arg2.npy") == 5.0)
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]


def test_a_kernel_named_dots_cannot_send_outputs_outside_out(tmp_path):
    k = tmp_path / "...pto"
    k.write_text(VADD.read_text())
    r = cli("run", str(k), "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    path = Path(json.loads(r.stdout)["outputs"]["arg2"])
    assert path == Path("out") / "kernel" / "arg2.npy" and (tmp_path / path).exists()
    assert not (tmp_path / "arg2.npy").exists()


def test_expect_compares_and_prints_the_worst_elements(tmp_path):
    want = np.full((32, 32), 5.0, np.float32)
    np.save(tmp_path / "good.npy", want)
    bad = want.copy()
    bad[3, 17] = 7.0
    bad[0, 1] = 5.5
    np.save(tmp_path / "bad.npy", bad)
    ok = cli("run", str(VADD), "--output-dir", str(tmp_path / "o"), *_inputs(tmp_path),
             "--expect", f"arg2={tmp_path / 'good.npy'}")
    assert ok.returncode == 0, ok.stderr
    r = cli("run", str(VADD), "--output-dir", str(tmp_path / "o"), *_inputs(tmp_path),
            "--expect", f"arg2={tmp_path / 'bad.npy'}", "--rtol", "0.01")
    assert r.returncode == 1
    lines = r.stderr.splitlines()
    assert "2 of 1024 elements differ" in lines[0]
    assert lines[1].strip().startswith("arg2[3, 17]: got 5, want 7") and "arg2[0, 1]" in lines[2]
    loose = cli("run", str(VADD), "--output-dir", str(tmp_path / "o"), *_inputs(tmp_path),
                "--expect", f"arg2={tmp_path / 'bad.npy'}", "--atol", "3")
    assert loose.returncode == 0
