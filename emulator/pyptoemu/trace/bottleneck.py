"""Where the cycles go: the critical path of a run and the bottleneck it shows.

The busiest pipe is not always what bounds a kernel: a load -> compute -> store chain without double
buffering keeps every pipe mostly idle, and its time is the sum of the stages, joined by flags. So the
summary walks the critical path backwards from the instruction that finished last. At each step it
asks what made the instruction start when it did: its pipe's previous instruction (the pipe was
busy), the flag its wait_flag consumed (the pipe was blocked on another pipe), or the scalar unit
issuing it. Each cycle of the makespan is charged to exactly one of: a pipe working (occupancy), a
pipe's results in flight (latency beyond occupancy), sync costs, or the scalar unit. The wait_flags
the path crosses are kept with the interval their pipe spent blocked.

Verdict: a pipe whose work covers at least half of the makespan bounds the kernel
(``MTE2-bound: 78% of the makespan is MTE2 work on the critical path``); otherwise the kernel is held
up by the chain of waits (``latency-bound: 61% of the makespan waiting on MTE2->MTE1 flags at lines
40-52``), or by the scalar unit issuing (``issue-bound``).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

from pyptoemu.core.pipe import BARRIER, OP, WAIT, Instr

BOUND_SHARE = 0.5  # a pipe whose work covers this share of the makespan bounds the kernel
LOOKBACK = 256  # earlier instructions of a pipe searched for the one that released it


@dataclass
class Bottleneck:
    """The critical path, summed: cycles per (what, pipe or flag), the crossed waits, a verdict."""

    makespan: int
    charged: dict[tuple[str, str], int] = field(default_factory=dict)  # ("work"|"latency"|"sync", pipe)
    waits: dict[tuple[str, str], list[tuple[int, int, int]]] = field(default_factory=dict)  # flag -> (lo, hi, line)
    pipe: str = "S"
    kind: str = "issue-bound"
    text: str = ""

    def share(self, pipe: str) -> float:
        cycles = self.charged.get(("work", pipe), 0) + self.charged.get(("latency", pipe), 0)
        return cycles / self.makespan if self.makespan else 0.0

    def wait_share(self, flag: tuple[str, str]) -> float:
        """Share of the makespan during which the waiting pipe was blocked on this kind of flag
        (overlapping waits counted once)."""
        spans = sorted((lo, hi) for lo, hi, _ in self.waits.get(flag, []))
        total, cur_lo, cur_hi = 0, None, None
        for lo, hi in spans:
            if cur_hi is None or lo > cur_hi:
                if cur_hi is not None:
                    total += cur_hi - cur_lo
                cur_lo, cur_hi = lo, hi
            else:
                cur_hi = max(cur_hi, hi)
        if cur_hi is not None:
            total += cur_hi - cur_lo
        return total / self.makespan if self.makespan else 0.0


class _PathWalker:
    """Walks the recorded instructions backwards along the constraint that set each start."""

    def __init__(self, log: list[Instr]) -> None:
        self.by_pipe: dict[str, list[Instr]] = {}
        for ins in log:
            if ins.start >= 0:
                self.by_pipe.setdefault(ins.pipe, []).append(ins)
        self.position = {id(ins): k for lst in self.by_pipe.values() for k, ins in enumerate(lst)}
        # for bisecting: the scalar unit's sync points by end, the pipes' instructions by completion
        self.s_syncs = sorted((q for q in self.by_pipe.get("S", []) if q.kind in (BARRIER, WAIT)),
                              key=lambda q: q.end)
        self.s_sync_ends = [q.end for q in self.s_syncs]
        self.completions = sorted((i for p, lst in self.by_pipe.items() if p != "S" for i in lst),
                                  key=lambda q: q.done)
        self.completion_times = [q.done for q in self.completions]

    def pipe_predecessor(self, ins: Instr) -> Instr | None:
        """The earlier instruction of the same pipe whose release (end) or completion (done)
        is exactly this one's start."""
        lst = self.by_pipe.get(ins.pipe, [])
        k = self.position.get(id(ins), 0)
        for j in range(k - 1, max(-1, k - 1 - LOOKBACK), -1):
            q = lst[j]
            if q.end == ins.start or q.done == ins.start:
                return q
        return None

    def scalar_sync_before(self, t: int) -> Instr | None:
        """The latest sync point of the scalar unit (a full barrier or a wait on S) ending by t."""
        k = bisect.bisect_right(self.s_sync_ends, t)
        return self.s_syncs[k - 1] if k else None

    def drained_by(self, t: int) -> Instr | None:
        """The pipe instruction whose completion a full barrier ending at t waited for."""
        k = bisect.bisect_right(self.completion_times, t)
        return self.completions[k - 1] if k else None


def _charge(b: Bottleneck, what: str, pipe: str, cycles: int) -> None:
    if cycles > 0:
        b.charged[(what, pipe)] = b.charged.get((what, pipe), 0) + cycles


def _charge_instr(b: Bottleneck, ins: Instr, t: int) -> None:
    """Charge [ins.start, t] to the instruction on the path."""
    if ins.kind == OP:
        work_end = min(ins.end, t)
        _charge(b, "work", ins.pipe, work_end - ins.start)
        _charge(b, "latency", ins.pipe, t - max(work_end, ins.start))
    else:
        _charge(b, "sync", ins.pipe, t - ins.start)


def critical_path(log: list[Instr], makespan: int) -> Bottleneck:
    """Walk the critical path of a finished run (its recorded instructions) backwards."""
    b = Bottleneck(makespan=makespan)
    live = [i for i in log if i.start >= 0]
    if not live or makespan <= 0:
        b.text = "no instructions ran"
        return b
    walker = _PathWalker(live)
    cur: Instr | None = max(live, key=lambda i: (i.done, i.seq))
    t = makespan
    _charge(b, "sync", "S", t - cur.done)  # the final drain
    t = min(t, cur.done)
    steps = 0
    while cur is not None and t > 0 and steps < 10 * len(live) + 10:
        steps += 1
        if cur.pipe == "S" and cur.kind == BARRIER:  # a full barrier: waited for the pipes to drain
            pred = walker.drained_by(cur.end)
            if pred is None or pred.done <= 0:
                _charge(b, "sync", "S", t)
                break
            _charge(b, "sync", "S", t - pred.done)
            cur, t = pred, pred.done
            continue
        _charge_instr(b, cur, t)
        start = cur.start
        if cur.kind == WAIT and cur.released_by is not None and start > cur.wait_start:
            src, dst, _ = cur.flag
            b.waits.setdefault((src, dst), []).append((cur.wait_start, start, cur.loc.line if cur.loc else 0))
            setter = cur.released_by
            _charge(b, "sync", setter.pipe, start - min(setter.end, start))
            cur, t = setter, min(setter.end, start)
            continue
        pred = walker.pipe_predecessor(cur) if cur.pipe != "S" else None
        if pred is not None:
            cur, t = pred, start
            continue
        # issued late: the scalar unit was busy up to here since its last sync point
        sync = walker.scalar_sync_before(start)
        lo = sync.end if sync is not None else 0
        _charge(b, "work", "S", start - lo)
        cur, t = sync, lo
    _verdict(b, live)
    return b


def _verdict(b: Bottleneck, live: list[Instr]) -> None:
    pipes = {p for (_, p) in b.charged}
    top = max(sorted(pipes), key=b.share) if pipes else "S"
    b.pipe = top
    share = b.share(top)
    if share >= BOUND_SHARE:
        if top == "S":
            b.kind = "issue-bound"
            b.text = f"issue-bound: {share:.0%} of the makespan is the scalar unit issuing on the critical path"
        else:
            b.kind = f"{top}-bound"
            b.text = f"{top}-bound: {share:.0%} of the makespan is {top} work on the critical path"
        return
    if b.waits:
        flag = max(sorted(b.waits), key=b.wait_share)
        lines = sorted(line for _, _, line in b.waits[flag] if line)
        where = ""
        if lines:
            where = f" at line {lines[0]}" if lines[0] == lines[-1] else f" at lines {lines[0]}-{lines[-1]}"
        b.kind = "latency-bound"
        b.text = (f"latency-bound: {b.wait_share(flag):.0%} of the makespan waiting on {flag[0]}->{flag[1]} "
                  f"flags{where} (largest pipe share on the critical path: {top} {share:.0%})")
        return
    b.kind = "latency-bound"
    b.text = (f"latency-bound: no pipe works half of the makespan (largest share on the critical path: "
              f"{top} {share:.0%})")


__all__ = ["BOUND_SHARE", "Bottleneck", "critical_path"]
