"""``pyptoemu report TRACE.json``: where the cycles went, read back from a run's trace.

Per pipe and per core: busy cycles (an instruction's occupancy; a wait's own cost without the time it
was blocked) and the share of the run. The verdict names the busiest pipe and, when no pipe is
saturated, the wait that costs most; the run's critical-path verdict (``trace/bottleneck.py``) is
shown beside it when the trace records it. Per source line (what msprof calls the
code-line view): instructions, busy cycles and cycles blocked in waits. Per flag (or FIFO): how many
waits and how long they blocked. ``--csv`` writes the line table; ``--plot`` draws a timeline of busy
intervals per pipe and core with matplotlib (the optional extra ``pyptoemu[plot]``).

The report reads only the trace file, so it works on traces from earlier runs or other machines.
"""

from __future__ import annotations

import csv
import json
import math
import os
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

from pyptoemu.errors import InputError
from pyptoemu.output import write_atomic

BOUND_SHARE = 0.6  # below this busy share the verdict adds where the rest of the time went


@dataclass(slots=True)
class PipeUse:
    busy: int = 0
    instructions: int = 0
    blocked: int = 0
    intervals: list[tuple[int, int]] = field(default_factory=list)  # (start, length) busy spans


@dataclass(slots=True)
class LineCost:
    line: str
    instructions: int = 0
    busy: int = 0
    blocked: int = 0
    pipes: set[str] = field(default_factory=set)

    @property
    def total(self) -> int:
        return self.busy + self.blocked


@dataclass(slots=True)
class WaitCost:
    what: str  # "MTE2->V EVENT_ID0" or a FIFO name
    waits: int = 0
    blocked: int = 0


@dataclass(slots=True)
class Report:
    source: str
    cycles: int
    clock_ghz: float
    machine: str
    cores: dict[str, dict[str, PipeUse]]  # core name -> pipe -> use
    lines: list[LineCost]
    waits: list[WaitCost]
    status: str = "ok"
    critical_path: str = ""  # the run's own bottleneck verdict from its critical path, when recorded
    launch: tuple[int, int] = (0, 0)  # the machine's (launch_kernel, launch_block) cycles, when recorded

    def pipe_totals(self) -> dict[str, PipeUse]:
        out: dict[str, PipeUse] = {}
        for pipes in self.cores.values():
            for name, use in pipes.items():
                tot = out.setdefault(name, PipeUse())
                tot.busy += use.busy
                tot.instructions += use.instructions
                tot.blocked += use.blocked
        return out

    def verdict(self) -> str:
        totals = self.pipe_totals()
        span = max(self.cycles, 1) * max(len(self.cores), 1)
        if not totals:
            return "no instructions in the trace"
        name, use = max(totals.items(), key=lambda kv: kv[1].busy)
        share = use.busy / span
        blocked = sum(u.blocked for u in totals.values())
        verdict = f"bound by {name} (busy {100 * share:.0f}% of the run)"
        if share >= BOUND_SHARE:
            return verdict
        top = max(self.waits, key=lambda w: w.blocked, default=None)
        if top is not None and blocked:
            return (f"{verdict}; no pipe is saturated, so hand-offs between pipes cost time: waits block "
                    f"{blocked} pipe-cycles, most on {top.what} ({top.blocked})")
        return f"{verdict}; no pipe is saturated: issue cost and latency between dependent instructions"


def format_launch(cycles: int, launch: tuple[int, int], machine: str, clock_ghz: float) -> str:
    """The summary line of the launch: what a kernel time measured on the board adds to the
    simulated cycles (the kernel launch and the first wave's block dispatch, both before cycle 0;
    later waves' dispatch is in the cycles already), and the time on hardware that makes. Empty
    for a machine file without launch figures."""
    kernel, block = launch
    if not kernel and not block:
        return ""
    total = cycles + kernel + block
    us = f" = {total / (clock_ghz * 1e3):.3f} us" if clock_ghz else ""
    return (f"launch     + {kernel + block} cycles ({machine}: launch_kernel {kernel}, launch_block {block} for the "
            f"first wave) = {total} cycles{us} on hardware")


def _thread_names(events: list[dict]) -> tuple[dict, dict]:
    procs, threads = {}, {}
    for e in events:
        if e.get("ph") != "M":
            continue
        if e.get("name") == "process_name":
            procs[e.get("pid")] = str(e.get("args", {}).get("name", f"process {e.get('pid')}"))
        elif e.get("name") == "thread_name":
            name = str(e.get("args", {}).get("name", f"thread {e.get('tid')}"))
            threads[(e.get("pid"), e.get("tid"))] = name.removeprefix("PIPE_")
    return procs, threads


def _core_name(process: str) -> str:
    """``AI core 0 (a2a3) @vadd; time axis ...`` -> ``AI core 0``."""
    return process.split(" (")[0].split(";")[0]


def _is_count(value: object) -> bool:
    """A finite non-negative number of cycles (JSON gives int or float; bool is not a count)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 0


def _check_trace_shape(path: str | os.PathLike, events: list, other: dict) -> None:
    """The fields the report reads have the types ``pyptoemu run --trace`` writes: a hand-edited or
    foreign trace is refused by name (which event, which field) instead of failing inside the tally."""
    for key in ("cycles", "clock_ghz"):
        if key in other and not _is_count(other[key]):
            raise InputError(f"{path}: otherData.{key} is {other[key]!r}, not a non-negative number")
    counts = other.get("instructions", {})
    if not isinstance(counts, dict) or not all(
            isinstance(pipes, dict) and all(_is_count(n) for n in pipes.values()) for pipes in counts.values()):
        raise InputError(f"{path}: otherData.instructions is not {{core: {{pipe: count}}}}")
    for i, e in enumerate(events):
        if not isinstance(e, dict):
            raise InputError(f"{path}: traceEvents[{i}] is {type(e).__name__}, not an event object")
        if not isinstance(e.get("args", {}), dict):
            raise InputError(f"{path}: traceEvents[{i}].args is not an object")
        if e.get("ph") != "X":
            continue
        for key in ("ts", "dur"):
            if not _is_count(e.get(key, 0)):
                raise InputError(f"{path}: traceEvents[{i}].{key} is {e.get(key)!r}, not a non-negative number")
        if not _is_count(e.get("args", {}).get("blocked_cycles", 0)):
            raise InputError(f"{path}: traceEvents[{i}].args.blocked_cycles is not a non-negative number")
        if not isinstance(e.get("args", {}).get("line", ""), str):
            raise InputError(f"{path}: traceEvents[{i}].args.line is not a file:line:col string")


def load_report(path: str | os.PathLike) -> Report:
    """Read a trace written by ``pyptoemu run --trace``."""
    try:
        doc = json.loads(Path(path).read_text())
    except OSError as e:
        raise InputError(f"cannot read trace {path}: {e.strerror or e}") from None
    except ValueError as e:
        raise InputError(f"{path} is not a JSON trace: {e}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        raise InputError(f"{path} is not a pyptoemu trace (no traceEvents list)")
    other = doc.get("otherData", {})
    if not isinstance(other, dict) or other.get("time_unit") != "cycle":
        raise InputError(f"{path} has no cycle time axis (otherData.time_unit); re-run the kernel with "
                         f"this version of pyptoemu to get one")
    events = doc["traceEvents"]
    _check_trace_shape(path, events, other)
    procs, threads = _thread_names(events)
    cores: dict[str, dict[str, PipeUse]] = {}
    lines: dict[str, LineCost] = {}
    waits: dict[str, WaitCost] = {}
    for e in events:
        if e.get("ph") != "X":
            continue
        core = _core_name(procs.get(e.get("pid"), f"core {e.get('pid')}"))
        pipe = threads.get((e.get("pid"), e.get("tid")), str(e.get("tid")))
        args = e.get("args", {})
        blocked = int(args.get("blocked_cycles", 0))
        busy = int(e.get("dur", 0)) - blocked
        use = cores.setdefault(core, {}).setdefault(pipe, PipeUse())
        use.blocked += blocked  # (its busy cycles: the spans it covers, below)
        use.instructions += 1
        if busy > 0:
            use.intervals.append((int(e["ts"]) + blocked, busy))
        where = args.get("line")
        if where:
            lc = lines.setdefault(where, LineCost(where))
            lc.instructions += 1
            lc.busy += busy
            lc.blocked += blocked
            lc.pipes.add(pipe)
        what = args.get("flag") or args.get("fifo")
        if what and ("blocked_cycles" in args):
            wc = waits.setdefault(str(what), WaitCost(str(what)))
            wc.waits += 1
            wc.blocked += blocked
    counted = other.get("instructions", {})  # what the run counted (its summary's instrs), when recorded
    for core, pipes in cores.items():
        for pipe, use in pipes.items():
            use.busy = _covered(use.intervals)
            if pipe in counted.get(core, {}):  # the scalar unit's lane holds spans, not one event per instruction
                use.instructions = int(counted[core][pipe])
    return Report(source=str(path), cycles=int(other.get("cycles", 0)),
                  clock_ghz=float(other.get("clock_ghz", 0.0)), machine=str(other.get("machine", "")),
                  cores=cores, lines=sorted(lines.values(), key=lambda c: (-c.total, c.line)),
                  waits=sorted(waits.values(), key=lambda w: (-w.blocked, w.what)),
                  status=str(other.get("status", "ok")), critical_path=str(other.get("bound", "")),
                  launch=_launch(other.get("launch_cycles")))


def _launch(recorded: object) -> tuple[int, int]:
    """(launch_kernel, launch_block) from a trace's ``launch_cycles``; (0, 0) from an older trace."""
    if not isinstance(recorded, dict):
        return (0, 0)
    kernel, block = recorded.get("kernel", 0), recorded.get("block", 0)
    return (int(kernel), int(block)) if _is_count(kernel) and _is_count(block) else (0, 0)


def _covered(intervals: list[tuple[int, int]]) -> int:
    """Cycles covered by the busy spans of one pipe. The scalar unit's lane holds its activity
    spans and, over them, the instructions it ran itself (load_scalar, full barriers): a cycle in
    both is one busy cycle, not two, so no pipe is ever busier than the run is long."""
    total = 0
    reach = None
    for start, length in sorted(intervals):
        end = start + length
        if reach is None or start >= reach:
            total += length
            reach = end
        elif end > reach:
            total += end - reach
            reach = end
    return total


def format_report(report: Report, top: int = 10) -> str:
    cycles = max(report.cycles, 1)
    us = report.cycles / (report.clock_ghz * 1e3) if report.clock_ghz else 0.0
    out = [f"report     {report.source}  ({report.machine}, {report.cycles} cycles = {us:.3f} us"
           + (", stopped at a fault" if report.status == "faulted" else "") + ")"]
    launch = format_launch(report.cycles, report.launch, report.machine, report.clock_ghz)
    if launch and report.status != "faulted":
        out.append(launch)
    for core, pipes in report.cores.items():
        out.append(f"{core:<10} busy cycles   share  instrs  blocked")
        for pipe, use in pipes.items():
            out.append(f"  {pipe:<7} {use.busy:>11} {100 * use.busy / cycles:6.1f}% {use.instructions:>7} "
                       f"{use.blocked:>8}")
    out.append(f"verdict    {report.verdict()}")
    if report.critical_path:
        out.append(f"critical   {report.critical_path}")
    out.append(f"lines      top {min(top, len(report.lines))} of {len(report.lines)} by cycles "
               "(busy + blocked in waits)")
    out.append(f"  {'instrs':>7} {'busy':>9} {'blocked':>9}  pipes      source line")
    for lc in report.lines[:top]:
        out.append(f"  {lc.instructions:>7} {lc.busy:>9} {lc.blocked:>9}  {','.join(sorted(lc.pipes)):<10} "
                   f"{lc.line}")
    if report.waits:
        out.append("waits      flag / FIFO                 waits   blocked cycles")
        for w in report.waits:
            out.append(f"  {w.what:<28} {w.waits:>7} {w.blocked:>16}")
    else:
        out.append("waits      none")
    return "\n".join(out)


def write_csv(report: Report, path: str | os.PathLike) -> Path:
    """The per-line table: line, instructions, busy_cycles, blocked_cycles, pipes."""
    def write(f) -> None:
        import io

        text = io.StringIO()
        w = csv.writer(text)
        w.writerow(["line", "instructions", "busy_cycles", "blocked_cycles", "pipes"])
        for lc in report.lines:
            w.writerow([lc.line, lc.instructions, lc.busy, lc.blocked, " ".join(sorted(lc.pipes))])
        f.write(text.getvalue().encode())

    return write_atomic(path, write)


PLOT_FORMATS = ("png", "svg", "pdf")  # what the timeline is written as: the file's suffix says which


def plot_format(path: str | os.PathLike) -> str:
    """The timeline's format from the file's suffix, or an :class:`InputError` naming the ones there
    are (checked before the report is printed too: the mistake then stops the command at once)."""
    fmt = Path(path).suffix.lower().lstrip(".")
    if fmt not in PLOT_FORMATS:
        raise InputError(f"--plot {path}: the timeline is written as .png, .svg or .pdf (the suffix says which), "
                         f"not {'.' + fmt if fmt else 'a file without a suffix'}")
    return fmt


def plot_report(report: Report, path: str | os.PathLike) -> Path:
    """A timeline (PNG, SVG or PDF, by the file's suffix): one row per core and pipe, a bar per busy
    interval."""
    fmt = plot_format(path)
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise InputError("--plot needs matplotlib, which is not installed: "
                         "python -m pip install 'pyptoemu[plot]'") from None
    rows = [(core, pipe, use) for core, pipes in report.cores.items() for pipe, use in pipes.items()]
    fig, ax = plt.subplots(figsize=(11, 0.45 * len(rows) + 1.4))
    cmap = plt.get_cmap("tab10")
    for i, (_core, _pipe, use) in enumerate(rows):
        ax.broken_barh(use.intervals, (i - 0.4, 0.8), facecolors=cmap(i % 10))
        share = 100 * use.busy / max(report.cycles, 1)
        ax.text(report.cycles * 1.005, i, f"{share:.0f}%", va="center", fontsize=8)
    multi = len(report.cores) > 1
    ax.set_yticks(range(len(rows)), [f"{c} {p}" if multi else p for c, p, _ in rows])
    ax.invert_yaxis()
    ax.set_xlim(0, max(report.cycles, 1) * 1.06)
    ax.set_xlabel(f"cycle ({report.clock_ghz} GHz)")
    title = f"{Path(report.source).name}: busy intervals per pipe. {report.verdict()}"
    ax.set_title("\n".join(textwrap.wrap(title, 140)), fontsize=9, loc="left")
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    out = write_atomic(path, lambda f: fig.savefig(f, format=fmt, dpi=110))
    plt.close(fig)
    return out


__all__ = ["LineCost", "PipeUse", "Report", "WaitCost", "format_report", "load_report", "plot_report", "write_csv"]
