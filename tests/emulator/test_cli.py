"""Command-line contract: exit codes, messages, JSON, outputs and the Chrome trace."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
VADD = ROOT / "examples" / "vadd_32x32.pto"
PIPES = {"S", "MTE1", "MTE2", "MTE3", "V", "M", "FIX"}


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pyptoemu.cli", *args], check=False, capture_output=True, text=True,
                          cwd=cwd or ROOT, timeout=300)


def test_shared_contract_checker_passes_on_vadd():
    checker = ROOT.parent / "shared" / "tools" / "check_run_contract.py"
    if not checker.exists():
        pytest.skip("../shared/tools/check_run_contract.py is not beside the checkout")
    r = subprocess.run([sys.executable, str(checker), str(VADD)], check=False, capture_output=True, text=True,
                       timeout=600,
                       cwd=ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "contract: OK" in r.stdout


def test_json_summary_and_outputs(tmp_path):
    x = np.full((32, 32), 2.0, np.float32)
    y = np.full((32, 32), 3.0, np.float32)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "y.npy", y)
    r = cli("run", str(VADD), "--input", f"arg0={tmp_path / 'x.npy'}", "--input", f"arg1={tmp_path / 'y.npy'}",
            "--output-dir", str(tmp_path / "out"), "--json", "--trace", str(tmp_path / "t.json"))
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert set(doc["pipes"]) == PIPES
    assert doc["entry"] == "vadd" and doc["cycles"] > 0 and doc["bound_pipe"] in PIPES
    assert doc["time_us"] == pytest.approx(doc["cycles"] / 1850.0)
    assert doc["pipes"]["V"]["instructions"] == 1 and doc["pipes"]["MTE2"]["instructions"] == 2
    out = np.load(doc["outputs"]["arg2"])
    assert out.shape == (32, 32) and np.all(out == 5.0)
    assert doc["findings"] == []


def test_trace_properties(tmp_path):
    trace = tmp_path / "t.json"
    r = cli("run", str(ROOT / "examples" / "double_buffer_1024.pto"), "--trace", str(trace),
            "--output-dir", str(tmp_path))
    assert r.returncode == 0, r.stderr
    doc = json.loads(trace.read_text())
    events = doc["traceEvents"]
    names = {e["tid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    assert set(names.values()) == {f"PIPE_{p}" for p in PIPES}
    spans = defaultdict(list)
    for e in events:
        if e["ph"] == "X":
            spans[e["tid"]].append((e["ts"], e["dur"], e["name"]))
    assert {names[t] for t in spans} >= {"PIPE_MTE2", "PIPE_V", "PIPE_MTE3", "PIPE_S"}
    for evs in spans.values():
        evs.sort()
        for (t0, d0, _), (t1, d1, _) in itertools.pairwise(evs):
            assert not (t0 < t1 < t0 + d0 - 1e-9 and t1 + d1 > t0 + d0 + 1e-9)
    tloads = [e for e in events if e["ph"] == "X" and e["name"] == "tload"]
    assert len(tloads) == 256
    a = tloads[0]["args"]
    assert a["bytes"] == 64 * 64 * 4 and "line" in a and any("UB+" in o for o in a["operands"])
    starts = [e for e in events if e["ph"] == "s"]
    ends = [e for e in events if e["ph"] == "f"]
    assert starts and len(starts) == len(ends)
    assert [e for e in events if e["ph"] == "C"]
    # whole cycles on the time axis (exact in Perfetto): the last span ends at the run's cycle count
    assert doc["otherData"]["time_unit"] == "cycle"
    last_end = max(e["ts"] + e["dur"] for e in events if e["ph"] == "X")
    assert last_end == doc["otherData"]["cycles"]
    assert all(isinstance(e["ts"], int) and isinstance(e.get("dur", 0), int) for e in events if "ts" in e)
    assert all(e["dur"] > 0 for e in events if e["ph"] == "X" and e["name"] == "tload")


def test_default_trace_path(tmp_path):
    kernel = tmp_path / "mykern.pto"
    kernel.write_text(VADD.read_text())
    r = cli("run", str(kernel), "--trace", "--output-dir", str(tmp_path / "o"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "traces" / "mykern.json").exists()
    assert "traces/mykern.json" in r.stdout


@pytest.mark.parametrize("args, code, pattern", [
    (["run", "does_not_exist.pto"], 2, "does_not_exist.pto"),
    (["run"], 2, "usage"),
    (["run", "examples/vadd_32x32.pto", "--arg", "nonsense"], 2, "argN=VALUE"),
    (["run", "examples/vadd_32x32.pto", "--arg", "arg9=1"], 2, "no argument arg9"),
    (["run", "examples/matmul_splitk.pto"], 2, r"arg4.*--arg arg4=VALUE"),
    (["isa", "show", "NOPE"], 2, "no instruction named"),
])
def test_bad_input_exit_codes(args, code, pattern, tmp_path):
    import re

    r = cli(*args)
    assert r.returncode == code, (r.stdout, r.stderr)
    assert re.search(pattern, r.stderr), r.stderr
    assert "Traceback" not in r.stderr


def test_parse_error_has_file_line_col(tmp_path):
    bad = tmp_path / "bad.pto"
    bad.write_text("func.func @k(%arg0: !pto.ptr<f32>) {\n  %x = pto.tadd ins(%a : ) outs(\n}\n")
    r = cli("run", str(bad))
    assert r.returncode == 2
    assert f"{bad}:2:" in r.stderr and "Traceback" not in r.stderr


def test_kernel_fault_exit_code_1(tmp_path):
    k = tmp_path / "dead.pto"
    k.write_text("func.func @k(%arg0: !pto.ptr<f32>) {\n"
                 "  pto.wait_flag[<PIPE_MTE2>, <PIPE_V>, <EVENT_ID0>]\n  return\n}\n")
    r = cli("run", str(k), "--output-dir", str(tmp_path))
    assert r.returncode == 1
    assert "deadlock" in r.stderr and f"{k}:2:3" in r.stderr and "Traceback" not in r.stderr


def test_isa_list_and_show():
    r = cli("isa", "list")
    assert r.returncode == 0 and "trowsum" in r.stdout.lower() and "tmatmul" in r.stdout.lower()
    r = cli("isa", "show", "TROWSUM")
    assert r.returncode == 0 and "V" in r.stdout and "tmp" in r.stdout


def test_race_report_in_json_and_trace(tmp_path):
    trace = tmp_path / "t.json"
    r = cli("run", "examples/vadd_race.pto", "--json", "--trace", str(trace), "--output-dir", str(tmp_path))
    assert r.returncode == 1  # races are errors by default
    doc = json.loads(r.stdout)
    races = [f for f in doc["findings"] if f["kind"] == "race"]
    assert len(races) == 1 and races[0]["severity"] == "error"
    assert races[0]["locations"] == ["examples/vadd_race.pto:43:5", "examples/vadd_race.pto:50:5"]
    assert races[0]["detail"]["kind"] == "RAW"
    events = json.loads(trace.read_text())["traceEvents"]
    names = {e["tid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    marks = {names[e["tid"]] for e in events if e["ph"] == "i" and e["name"] == "race"}
    assert marks == {"PIPE_V", "PIPE_MTE3"}
    assert cli("run", "examples/vadd_race.pto", "--races", "warn", "--output-dir", str(tmp_path)).returncode == 0
    off = cli("run", "examples/vadd_race.pto", "--races", "off", "--json", "--output-dir", str(tmp_path))
    assert not [f for f in json.loads(off.stdout)["findings"] if f["kind"] == "race"]
