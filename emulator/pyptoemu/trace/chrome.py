"""Chrome trace (Perfetto / chrome://tracing) of one run.

Process per core (``AIC0``, ``AIV1``, ... on a chip), one thread per pipe (named, in pipe order); an ``X`` event per instruction whose
duration is the time it held its pipe (its completion cycle is in ``args``); flow arrows from each
``set_flag`` to the ``wait_flag`` it released and, across cores, from each FIFO push, slot release or
``sync.set`` to the wait it released; counters of bytes allocated per on-chip buffer;
findings as instant events on the pipes involved.

Timestamps are whole cycles written as the format's microseconds: one "us" on the time axis is one
cycle (the clock is in ``otherData``). Perfetto stores integers exactly, while a real-time value of a
cycle (0.54 ns at 1.85 GHz) would be truncated to whole nanoseconds and short slices to zero width.
"""

from __future__ import annotations

import os
from pathlib import Path

from pyptoemu.core.pipe import BARRIER, OP, SET, WAIT, XSET, XWAIT
from pyptoemu.core.tileop import describe_operands
from pyptoemu.output import write_json

PIPE_ORDER = ("S", "MTE1", "MTE2", "MTE3", "V", "M", "FIX")
KIND_NAME = {SET: "set_flag", WAIT: "wait_flag", BARRIER: "barrier"}


def build_trace(chip, result) -> dict:
    """The trace of a run: ``chip`` is a :class:`~pyptoemu.core.chip.Chip` (one process per core
    that ran, ``AIC0``, ``AIV1``, ...) or a lone core."""
    cores = list(getattr(chip, "cores", [chip]))
    machine = cores[0].machine
    us = int  # one trace microsecond per cycle (module docstring)
    pid_of = {id(c): i for i, c in enumerate(cores)}
    events: list[dict] = []
    flows: list[dict] = []
    flow_id = [0]
    for c in cores:
        events.extend(_core_events(c, pid_of, len(cores) > 1, result, us, flows, flow_id))
    events.extend(flows)
    for f in result.findings:
        for p in f.pipes or ["S"]:
            core_label, _, pipe = p.rpartition(":")
            pid = next((pid_of[id(c)] for c in cores if c.label == core_label), 0)
            events.append({"ph": "i", "pid": pid, "tid": TID.get(pipe, 0), "s": "t", "name": f"{f.kind}",
                           "ts": us(f.cycle), "args": {"message": f.message,
                                                       "locations": [str(x) for x in f.locations]}})
    return {"traceEvents": events,
            "otherData": {"cycles": result.cycles, "clock_ghz": machine.clock_ghz,
                          "machine": machine.name, "blocks": getattr(result, "blocks", 1),
                          "time_unit": "cycle", "status": result.status, "entry": result.entry,
                          "bound_pipe": result.bound_pipe, "bound": result.bound}}


TID = {p: i for i, p in enumerate(PIPE_ORDER)}


def _flows(ins, pid: int, t: int, pid_of: dict, us, flows: list, flow_id: list) -> None:
    """Arrows from each instruction that released a wait (a set_flag, a FIFO push or slot release,
    a sync.set, on any core) to the wait."""
    released = ins.released_by if ins.kind in (WAIT, XWAIT) else None
    for s in released if isinstance(released, list) else ([released] if released is not None else []):
        if s.start < 0:
            continue
        flow_id[0] += 1
        spid = pid_of.get(id(s.core), pid)
        cat = "flag" if ins.kind == WAIT else "cross-core"
        when = s.done if s.kind == OP else s.start
        flows.append({"ph": "s", "pid": spid, "tid": TID.get(s.pipe, 0), "id": flow_id[0], "name": cat,
                      "cat": cat, "ts": us(when)})
        flows.append({"ph": "f", "bp": "e", "pid": pid, "tid": t, "id": flow_id[0], "name": cat,
                      "cat": cat, "ts": us(ins.start)})


def _core_events(core, pid_of: dict, many: bool, result, us, flows: list, flow_id: list) -> list[dict]:
    pid = pid_of[id(core)]
    tid = TID
    if many:
        blocks = ", ".join(str(b) for b in core.blocks_run)
        title = f"{core.label} ({core.kind.name}, block {blocks}) @{result.entry}"
    else:
        title = (f"AI core 0 ({core.machine.name}) @{result.entry}; time axis: 1 us = 1 cycle at "
                 f"{core.machine.clock_ghz} GHz")
    events: list[dict] = [
        {"ph": "M", "pid": pid, "name": "process_name", "args": {"name": title}},
        {"ph": "M", "pid": pid, "name": "process_sort_index", "args": {"sort_index": pid}},
    ]
    for p, t in tid.items():
        events.append({"ph": "M", "pid": pid, "tid": t, "name": "thread_name", "args": {"name": f"PIPE_{p}"}})
        events.append({"ph": "M", "pid": pid, "tid": t, "name": "thread_sort_index", "args": {"sort_index": t}})

    spans: dict[int, list[dict]] = {t: [] for t in tid.values()}
    for a, b in core.scalar.s_spans:
        spans[tid["S"]].append({"ph": "X", "pid": pid, "tid": tid["S"], "name": "scalar", "ts": us(a),
                                "dur": us(b - a), "args": {"cycles": b - a}})
    for ins in core.trace_log:
        if ins.start < 0:
            continue
        t = tid.get(ins.pipe, 0)
        args = {"line": str(ins.loc), "start_cycle": ins.start}
        if ins.kind == OP:
            args.update({
                "operands": [f"{n} @ {buf}+{addr} ({size} B)" if buf != "scalar" else f"{n} = {addr}"
                             for n, buf, addr, size in describe_operands(ins)],
                "bytes": ins.nbytes, "cycles": ins.occupancy, "latency": ins.latency,
                "completion_cycle": ins.done,
            })
            name, ts, end = ins.name, ins.start, ins.end
        elif ins.kind in (XSET, XWAIT):
            name = f"{ins.name} {ins.flag.describe()}" if ins.kind == XWAIT else ins.name
            ts = ins.wait_start if ins.kind == XWAIT and ins.wait_start >= 0 else ins.start
            end = max(ins.end, ts)
            if ins.kind == XWAIT:
                args["blocked_cycles"] = ins.start - ts
        else:
            name = KIND_NAME.get(ins.kind, ins.name)
            if ins.flag is not None:
                src, dst, eid = ins.flag
                name = f"{name} {src}->{dst} #{eid}"
                args["flag"] = f"{src}->{dst} EVENT_ID{eid}"
            ts = ins.wait_start if ins.kind == WAIT and ins.wait_start >= 0 else ins.start
            end = max(ins.end, ts)
            if ins.kind == WAIT:
                args["blocked_cycles"] = ins.start - ts
            if ins.kind == OP or not ins.flag:
                args["cycles"] = end - ts
        spans[t].append({"ph": "X", "pid": pid, "tid": t, "name": name, "ts": us(ts), "dur": us(end - ts),
                         "args": args})
        _flows(ins, pid, t, pid_of, us, flows, flow_id)
    for evs in spans.values():
        events.extend(_no_partial_overlap(evs))

    buffers = sorted({name for _, name, _ in core.alloc_log})
    used = {b: 0 for b in buffers} or {spec.name: 0 for loc, spec in core.machine.buffers.items()
                                       if loc in core.kind.buffers}
    events.append({"ph": "C", "pid": pid, "name": "bytes allocated", "ts": 0, "args": dict(used)})
    for cycle, name, nbytes in core.alloc_log:
        used[name] = nbytes
        events.append({"ph": "C", "pid": pid, "name": "bytes allocated", "ts": us(cycle), "args": dict(used)})
    return events


def _no_partial_overlap(evs: list[dict]) -> list[dict]:
    """Trim a span that a later span on the same thread would partially overlap (nesting is fine)."""
    evs.sort(key=lambda e: (e["ts"], -e["dur"]))
    out: list[dict] = []
    for e in evs:
        if out:
            prev = out[-1]
            prev_end = prev["ts"] + prev["dur"]
            if e["ts"] < prev_end < e["ts"] + e["dur"]:
                prev["dur"] = max(0, e["ts"] - prev["ts"])
        out.append(e)
    return out


def write_trace(chip, path: str | os.PathLike, result) -> Path:
    """Write the trace atomically (see :mod:`pyptoemu.output`)."""
    return write_json(path, build_trace(chip, result))
