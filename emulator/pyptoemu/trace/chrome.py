"""Chrome trace (Perfetto / chrome://tracing) of one run, streamed to its file while the run goes.

Process per core (``AIC0``, ``AIV1``, ... on a chip), one thread per pipe (named, in pipe order); an
``X`` event per instruction whose duration is the time it held its pipe (its completion cycle is in
``args``); flow arrows from each ``set_flag`` to the ``wait_flag`` it released and, across cores,
from each FIFO push, slot release or ``sync.set`` to the wait it released; counters of bytes
allocated per on-chip buffer; findings as instant events on the pipes involved.

Timestamps are whole cycles written as the format's microseconds: one "us" on the time axis is one
cycle (the clock is in ``otherData``). Perfetto stores integers exactly, while a real-time value of a
cycle (0.54 ns at 1.85 GHz) would be truncated to whole nanoseconds and short slices to zero width.

:class:`TraceWriter` is a :class:`~pyptoemu.core.recorder.Recorder` consumer: each instruction's
event is written when the recorder hands it on (in start order), so a traced run holds no more in
memory than an untraced one. The file is a temporary one beside the target, renamed over it when
the run is complete (a faulted run included); a run that ends in an internal error leaves none.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from pyptoemu.core.pipe import BARRIER, OP, SET, WAIT, XSET, XWAIT, Instr, QueueRoom
from pyptoemu.core.tileop import describe_operands
from pyptoemu.errors import OutputError
from pyptoemu.output import file_mode

PIPE_ORDER = ("S", "MTE1", "MTE2", "MTE3", "V", "M", "FIX")
KIND_NAME = {SET: "set_flag", WAIT: "wait_flag", BARRIER: "barrier"}
TID = {p: i for i, p in enumerate(PIPE_ORDER)}


def instr_event(ins: Instr, pid: int) -> dict:
    """The ``X`` event of one instruction: the span it held (or waited on) its pipe."""
    t = TID.get(ins.pipe, 0)
    args: dict = {"line": str(ins.loc), "start_cycle": ins.start}
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
        if isinstance(ins.flag, QueueRoom):  # a stall of the scalar unit, not an instruction of the line
            args["issuing"] = args.pop("line")
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
        elif ins.kind == BARRIER and ins.pipe == "S" and ins.core is not None:
            # a full barrier: the scalar unit waited for every pipe to drain, then paid its own cost
            args["blocked_cycles"] = max(0, int(end - ts) - ins.core.scalar.barrier_all_cost)
        if not ins.flag:
            args["cycles"] = end - ts
    return {"ph": "X", "pid": pid, "tid": t, "name": name, "ts": int(ts), "dur": int(end - ts), "args": args}


class TraceWriter:
    """Streams a run's trace to ``path`` (see the module docstring); :meth:`close` finishes it with
    the findings and the run's figures once the result is known."""

    def __init__(self, path: str | os.PathLike, chip) -> None:
        self.target = Path(path)
        self.chip = chip
        self.pid_of: dict[int, int] = {}
        self.used: dict[int, dict] = {}  # per core: bytes in use per buffer (the counters)
        self.pending: dict[tuple, dict] = {}  # per (pid, tid): the last span, until the next is known
        self.flow_id = 0
        self.first = True
        try:
            self.target.parent.mkdir(parents=True, exist_ok=True)
            if self.target.is_dir() and not self.target.is_symlink():
                raise IsADirectoryError(21, "is a directory")
            fd, self.tmp = tempfile.mkstemp(dir=self.target.parent, prefix=f".{self.target.name}.", suffix=".tmp")
            self.file = os.fdopen(fd, "w", buffering=1 << 16)
            self.file.write('{"traceEvents":[')
        except OSError as e:
            raise OutputError(f"cannot write {self.target}: {e.strerror or e}") from None

    # writing ---------------------------------------------------------------------------------

    def _emit(self, event: dict) -> None:
        self.file.write(("" if self.first else ",\n") + json.dumps(event, separators=(",", ":")))
        self.first = False

    def _span(self, event: dict) -> None:
        """Of two spans of a thread that partially overlap, trim the earlier one to end where the
        later one starts (nesting is fine). Spans come nearly in start order; the scalar unit's
        activity spans come when they close, so the later one is held back until the next."""
        key = (event["pid"], event["tid"])
        prev = self.pending.get(key)
        if prev is None:
            self.pending[key] = event
            return
        a, b = (prev, event) if (prev["ts"], -prev["dur"]) <= (event["ts"], -event["dur"]) else (event, prev)
        a_end = a["ts"] + a["dur"]
        if b["ts"] < a_end < b["ts"] + b["dur"]:
            a["dur"] = max(0, b["ts"] - a["ts"])
        self._emit(a)
        self.pending[key] = b

    def _pid(self, core) -> int:
        pid = self.pid_of.get(id(core))
        if pid is None:
            pid = self.pid_of[id(core)] = len(self.pid_of)
            used = self.used[id(core)] = {spec.name: 0 for loc, spec in core.machine.buffers.items()
                                          if loc in core.kind.buffers}
            self._emit({"ph": "C", "pid": pid, "name": "bytes allocated", "ts": 0, "args": dict(used)})
        return pid

    def _side_logs(self, core, pid: int) -> None:
        """What the core logged beside its instructions since the last call: scalar activity spans
        and allocation counters (taken from the core and cleared: nothing accumulates)."""
        su = core.scalar
        if su.s_spans:
            for a, b in su.s_spans:
                self._span({"ph": "X", "pid": pid, "tid": TID["S"], "name": "scalar", "ts": int(a),
                            "dur": int(b - a), "args": {"cycles": int(b - a)}})
            su.s_spans.clear()
        if core.alloc_log:
            used = self.used[id(core)]
            for cycle, name, nbytes in core.alloc_log:
                used[name] = nbytes
                self._emit({"ph": "C", "pid": pid, "name": "bytes allocated", "ts": int(cycle), "args": dict(used)})
            core.alloc_log.clear()

    # the recorder's hooks ---------------------------------------------------------------------

    def consume(self, ins: Instr) -> None:
        core = ins.core
        pid = self._pid(core)
        self._side_logs(core, pid)
        self._span(instr_event(ins, pid))
        if ins.kind in (WAIT, XWAIT) and ins.released_by is not None:
            self._flows(ins, pid)

    def _flows(self, ins: Instr, pid: int) -> None:
        """Arrows from each instruction that released a wait (a set_flag, a FIFO push or slot
        release, a sync.set, on any core) to the wait."""
        released = ins.released_by
        for s in released if isinstance(released, list) else [released]:
            if s.start < 0:
                continue
            self.flow_id += 1
            spid = self.pid_of.get(id(s.core), pid)
            cat = "flag" if ins.kind == WAIT else "cross-core"
            when = s.done if s.kind == OP else s.start
            self._emit({"ph": "s", "pid": spid, "tid": TID.get(s.pipe, 0), "id": self.flow_id, "name": cat,
                        "cat": cat, "ts": int(when)})
            self._emit({"ph": "f", "bp": "e", "pid": pid, "tid": TID.get(ins.pipe, 0), "id": self.flow_id,
                        "name": cat, "cat": cat, "ts": int(ins.start)})

    def finish(self) -> None:
        """Every instruction was handed on: flush what each thread held back."""
        for event in self.pending.values():
            self._emit(event)
        self.pending.clear()

    def close(self, result) -> Path:
        """Write the processes' names, the findings and ``otherData``; rename the file into place."""
        cores = list(getattr(self.chip, "cores", [self.chip]))
        many = len(cores) > 1
        try:
            for c in cores:
                pid = self._pid(c)
                self._side_logs(c, pid)
                self._process_names(c, pid, many, result)
            # the spans the scalar unit closed after the last instruction (its tail, all of a kernel
            # with scalar work only) were held back by _span after finish() flushed: flush them too
            self.finish()
            for f in result.findings:
                for p in f.pipes or ["S"]:
                    core_label, _, pipe = p.rpartition(":")
                    pid = next((self.pid_of[id(c)] for c in cores if c.label == core_label), 0)
                    self._emit({"ph": "i", "pid": pid, "tid": TID.get(pipe, 0), "s": "t", "name": f"{f.kind}",
                                "ts": int(f.cycle), "args": {"message": f.message,
                                                             "locations": [str(x) for x in f.locations]}})
            machine = cores[0].machine if cores else self.chip.machine
            other = {"cycles": result.cycles, "clock_ghz": machine.clock_ghz, "machine": machine.name,
                     "blocks": getattr(result, "blocks", 1), "time_unit": "cycle", "status": result.status,
                     "entry": result.entry, "bound_pipe": result.bound_pipe, "bound": result.bound,
                     "launch_cycles": {"kernel": result.launch[0], "block": result.launch[1]},
                     # per core (named as its process is) and lane, the instructions the run's summary
                     # counts: ``pyptoemu report`` prints these, as its lanes hold sync ops and spans too
                     "instructions": {c.label if many else "AI core 0": _instructions(c) for c in cores}}
            self.file.write('],"otherData":' + json.dumps(other, separators=(",", ":")) + "}")
            self.file.close()
            os.chmod(self.tmp, file_mode())
            os.replace(self.tmp, self.target)
        except OSError as e:
            self.discard()
            raise OutputError(f"cannot write {self.target}: {e.strerror or e}") from None
        return self.target

    def _process_names(self, core, pid: int, many: bool, result) -> None:
        if many:
            blocks = ", ".join(str(b) for b in core.blocks_run)
            title = f"{core.label} ({core.kind.name}, block {blocks}) @{result.entry}"
        else:
            title = (f"AI core 0 ({core.machine.name}) @{result.entry}; time axis: 1 us = 1 cycle at "
                     f"{core.machine.clock_ghz} GHz")
        self._emit({"ph": "M", "pid": pid, "name": "process_name", "args": {"name": title}})
        self._emit({"ph": "M", "pid": pid, "name": "process_sort_index", "args": {"sort_index": pid}})
        for p, t in TID.items():
            self._emit({"ph": "M", "pid": pid, "tid": t, "name": "thread_name", "args": {"name": f"PIPE_{p}"}})
            self._emit({"ph": "M", "pid": pid, "tid": t, "name": "thread_sort_index", "args": {"sort_index": t}})

    def discard(self) -> None:
        """The run did not complete (an internal error): leave no file behind."""
        try:
            self.file.close()
        except OSError:
            pass
        try:
            os.unlink(self.tmp)
        except FileNotFoundError:
            pass


def _instructions(core) -> dict[str, int]:
    """What the run's summary counts per lane: the scalar unit's ops and issues, each pipe's tile
    instructions."""
    counts = {"S": int(core.scalar.count)}
    counts.update((name, int(pipe.count)) for name, pipe in core.pipes.items())
    return counts


__all__ = ["PIPE_ORDER", "TID", "TraceWriter", "instr_event"]
