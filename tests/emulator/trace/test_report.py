"""``pyptoemu report``: utilisation, verdict, per-line and per-flag costs read back from a trace, CSV
and PNG output, and exact integer timestamps in the trace."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import pytest

import pyptoemu
from pyptoemu.errors import InputError
from pyptoemu.report import format_report, load_report, plot_report, write_csv

ROOT = Path(__file__).resolve().parents[3]
SOFTMAX = ROOT / "examples" / "softmax_rows_64x128.pto"


@pytest.fixture(scope="module")
def softmax_trace(tmp_path_factory) -> tuple[Path, pyptoemu.RunResult]:
    path = tmp_path_factory.mktemp("report") / "softmax.json"
    return path, pyptoemu.run(SOFTMAX, trace=path)


def test_report_matches_the_run(softmax_trace):
    path, res = softmax_trace
    rep = load_report(path)
    assert rep.cycles == res.cycles and rep.machine == "a2a3"
    (core,) = rep.cores.values()
    for pipe in ("MTE2", "MTE3", "V"):
        assert core[pipe].busy == res.pipes[pipe].busy_cycles, pipe  # busy from the trace == the run's
    # every V instruction's occupancy sits on one source line: lines add up to the pipe's busy cycles
    v_lines = sum(lc.busy for lc in rep.lines if lc.pipes == {"V"})
    assert v_lines == res.pipes["V"].busy_cycles
    assert rep.lines == sorted(rep.lines, key=lambda lc: (-lc.total, lc.line))
    waits = {w.what: w for w in rep.waits}
    assert waits["MTE2->V EVENT_ID0"].waits == 4 and waits["MTE2->V EVENT_ID0"].blocked > 0
    text = format_report(rep, top=3)
    assert "verdict" in text and "softmax_rows_64x128.pto:" in text and "MTE2->V EVENT_ID0" in text
    assert rep.critical_path == res.bound and f"critical   {res.bound}" in text


def test_verdict_saturated_pipe_versus_hand_offs(tmp_path):
    """Double buffering saturates one pipe (the verdict is just that pipe); a single buffer leaves
    every pipe idle part of the time, and the verdict adds the costliest wait."""
    verdicts = {}
    for name in ("double_buffer_1024", "single_buffer_1024"):
        res = pyptoemu.run(ROOT / "examples" / f"{name}.pto", trace=tmp_path / f"{name}.json")
        rep = load_report(tmp_path / f"{name}.json")
        busiest = max(res.pipes, key=lambda p: res.pipes[p].busy_cycles)
        share = round(100 * res.pipes[busiest].busy_cycles / res.cycles)
        verdicts[name] = (rep.verdict(), f"bound by {busiest} (busy {share}% of the run)", rep.waits[0].what)
    double, single = verdicts["double_buffer_1024"], verdicts["single_buffer_1024"]
    assert double[0] == double[1]
    assert single[0].startswith(single[1] + "; no pipe is saturated") and f"most on {single[2]}" in single[0]


def test_csv_and_plot(softmax_trace, tmp_path):
    path, _ = softmax_trace
    rep = load_report(path)
    rows = list(csv.DictReader(write_csv(rep, tmp_path / "lines.csv").open()))
    assert rows[0].keys() == {"line", "instructions", "busy_cycles", "blocked_cycles", "pipes"}
    assert [int(r["busy_cycles"]) for r in rows] == [lc.busy for lc in rep.lines]
    pytest.importorskip("matplotlib")
    png = plot_report(rep, tmp_path / "t.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_without_matplotlib_says_how_to_get_it(softmax_trace, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    with pytest.raises(InputError, match=r"pip install 'pyptoemu\[plot\]'"):
        plot_report(load_report(softmax_trace[0]), tmp_path / "t.png")


def test_report_command_and_run_report(softmax_trace, tmp_path):
    r = subprocess.run([sys.executable, "-m", "pyptoemu", "report", str(softmax_trace[0]), "--csv",
                        str(tmp_path / "l.csv"), "--top", "2"], capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr
    assert r.stdout.count(".pto:") == 2 and (tmp_path / "l.csv").exists()
    r = subprocess.run([sys.executable, "-m", "pyptoemu", "run", str(SOFTMAX), "--report", "--output-dir",
                        str(tmp_path)], capture_output=True, text=True, check=False, cwd=tmp_path)
    assert r.returncode == 0 and "verdict" in r.stdout and (tmp_path / "traces" / "softmax_rows_64x128.json").exists()
    bad = tmp_path / "x.json"
    bad.write_text("{}")
    r = subprocess.run([sys.executable, "-m", "pyptoemu", "report", str(bad)], capture_output=True, text=True,
                       check=False)
    assert r.returncode == 2 and "not a pyptoemu trace" in r.stderr


def test_report_counts_instructions_as_the_run_does(softmax_trace):
    """Red team 8: ``run`` and ``report`` printed different instruction counts for the same run (the
    report counted trace events: a pipe's flag ops, the scalar unit's spans and stalls)."""
    path, res = softmax_trace
    (core,) = load_report(path).cores.values()
    for pipe, use in core.items():
        assert use.instructions == res.pipes[pipe].instructions, pipe
    assert core["S"].instructions > 0


def test_report_refuses_malformed_instruction_counts(tmp_path, softmax_trace):
    import json

    doc = json.loads(softmax_trace[0].read_text())
    doc["otherData"]["instructions"] = {"AI core 0": {"V": "many"}}
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    with pytest.raises(InputError, match="otherData.instructions"):
        load_report(bad)


def test_plot_format_follows_the_suffix_and_other_suffixes_are_refused(softmax_trace, tmp_path):
    """Red team 8: ``--plot x.txt`` wrote PNG bytes into x.txt."""
    rep = load_report(softmax_trace[0])
    with pytest.raises(InputError, match=r"\.png, \.svg or \.pdf"):
        plot_report(rep, tmp_path / "t.txt")
    assert not (tmp_path / "t.txt").exists()
    pytest.importorskip("matplotlib")
    assert plot_report(rep, tmp_path / "t.svg").read_text().lstrip().startswith("<?xml")


def test_summary_and_report_name_the_launch_and_the_time_on_hardware(tmp_path):
    """A user comparing with a kernel time measured on the board needs what the launch adds to the
    simulated cycles: the machine's launch_kernel and the first wave's launch_block (a2a3: 10905 +
    2000, pto-isa's fa_cost_model.py), outside the makespan. ``pyptoemu run`` prints it under the
    simulated cycles, ``pyptoemu report`` reads it from the trace, and the result carries it."""
    from ptoisa.machine import load_machine
    from pyptoemu.cli import format_summary

    params = load_machine("a2a3").params
    trace = tmp_path / "vadd.json"
    res = pyptoemu.run(ROOT / "examples" / "vadd_spmd.pto", blocks=96, args={"arg3": 1536}, data=False,
                       trace=trace)
    assert res.launch == (params["launch_kernel"], params["launch_block"]) == (10905, 2000)
    assert res.hardware_cycles == res.cycles + 12905
    line = (f"launch     + 12905 cycles (a2a3: launch_kernel 10905, launch_block 2000 for the first wave) = "
            f"{res.cycles + 12905} cycles = {(res.cycles + 12905) / 1850:.3f} us on hardware")
    assert load_machine("a2a3").clock_ghz == 1.85
    summary = format_summary(res, {}, data=False).splitlines()
    assert summary[2] == line and summary[1].startswith(f"simulated  {res.cycles} cycles")
    report = format_report(load_report(trace)).splitlines()
    assert report[1] == line
    assert res.to_json()["hardware_cycles"] == res.cycles + 12905
