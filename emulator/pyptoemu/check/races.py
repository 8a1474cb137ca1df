"""Happens-before race detector over the run's event log.

Vector clocks over the pipes: ``vc[P] = n`` means "the first n instructions issued to pipe P are
known complete". Edges, as the hardware guarantees them:

* program order on a pipe the machine declares in order (its results are forwarded along the pipe);
  on a pipe that is not in order (V on A2/A3) program order orders only the starts, not the writes;
* ``barrier <P>``: every earlier P instruction completes before any later one starts;
* ``set_flag``: every earlier instruction of its source pipe has completed; the ``wait_flag`` that
  consumes it inherits that knowledge, and so does every later instruction of the waiting pipe;
* the scalar unit: an instruction issued after a ``wait_flag`` on PIPE_S, a full barrier or a scalar
  memory access is ordered after it.

Any two accesses to overlapping bytes of one buffer (UB, L1, L0A/B/C, bias, GM per argument), at
least one a write, that are not ordered by these edges are a race. A race is reported once per pair
of source lines, with a count and the smallest fix.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from pyptoemu.core.pipe import BARRIER, OP, SET, WAIT, Instr

KIND_OF = {(True, False): "RAW", (False, True): "WAR", (True, True): "WAW"}


@lru_cache(maxsize=4096)
def _elements(fp: tuple) -> np.ndarray:
    base, sizes, strides = fp
    idx = np.full((1,), base, dtype=np.int64)
    for z, st in zip(sizes, strides):
        idx = (idx[:, None] + np.arange(z, dtype=np.int64)[None, :] * st).reshape(-1)
    return np.unique(idx)


@lru_cache(maxsize=16384)
def _fp_overlap(a: tuple, b: tuple) -> bool:
    return bool(np.intersect1d(_elements(a), _elements(b), assume_unique=True).size)


def footprints_overlap(a: tuple | None, b: tuple | None) -> bool:
    """Exact element overlap of two GM windows (tiles: their byte ranges already decided)."""
    if a is None or b is None or a == b:
        return True
    return _fp_overlap(a, b) if a < b else _fp_overlap(b, a)


def covers(lo: int, hi: int, fp: tuple | None, elo: int, ehi: int, efp: tuple | None) -> bool:
    """Does the access [lo, hi) (footprint fp) include every byte of [elo, ehi) (efp)?"""
    if not (lo <= elo and ehi <= hi):
        return False
    if fp == efp:  # both tiles (None), or the same window
        return True
    if fp is None or efp is None:
        return False
    return bool(np.isin(_elements(efp), _elements(fp), assume_unique=True).all())


def _join(a: dict, b: dict) -> dict:
    if not b:
        return a
    out = dict(a)
    for k, v in b.items():
        if out.get(k, 0) < v:
            out[k] = v
    return out


def clocks(core) -> dict[int, dict]:
    """Vector clock (knowledge at start) of every recorded instruction, keyed by ``id(instr)``."""
    in_order = dict(core.machine.in_order)
    in_order["S"] = True
    epochs = core.scalar.epochs
    epoch_vc: list[dict] = [{}]
    vc: dict[int, dict] = {}
    prev: dict[str, Instr] = {}

    def scalar_vc(e: int) -> dict:
        while len(epoch_vc) <= e:
            kind, what = epochs[len(epoch_vc) - 1]
            last = epoch_vc[-1]
            if kind == "wait":
                setter = what.released_by
                extra = vc.get(id(setter), {}) if setter is not None else {}
                if setter is not None:
                    extra = _join(extra, {setter.pipe: setter.pidx})
                epoch_vc.append(_join(last, extra))
            elif kind == "all":
                epoch_vc.append(_join(last, what))
            else:  # "s": scalar accesses so far
                epoch_vc.append(_join(last, {"S": what}))
        return epoch_vc[e]

    for ins in sorted((i for i in core.trace_log if i.start >= 0), key=lambda i: (i.start, i.seq)):
        p = ins.pipe
        base = dict(scalar_vc(ins.sepoch))
        before = prev.get(p)
        if before is not None:
            base = _join(base, vc[id(before)])
            if in_order.get(p, True) or before.kind == BARRIER:
                base = _join(base, {p: before.pidx + 1 if before.kind != BARRIER else before.pidx})
        if ins.kind == BARRIER or ins.kind == SET:
            base = _join(base, {p: ins.pidx})
        if ins.kind == WAIT and ins.released_by is not None:
            s = ins.released_by
            base = _join(base, _join(vc.get(id(s), {}), {s.pipe: s.pidx}))
        vc[id(ins)] = base
        prev[p] = ins
    return vc


def _fix(y: Instr, x: Instr, used_ids: dict) -> str:
    if y.pipe == x.pipe:
        return f"add `pto.barrier <PIPE_{x.pipe}>` between {y.loc} and {x.loc}"
    free = next((i for i in range(8) if i not in used_ids.get((y.pipe, x.pipe), set())), 0)
    flag = f"[<PIPE_{y.pipe}>, <PIPE_{x.pipe}>, <EVENT_ID{free}>]"
    return f"add `pto.set_flag{flag}` after {y.loc} and `pto.wait_flag{flag}` before {x.loc}"


def _report(core, y: Instr, x: Instr, yw: bool, xw: bool, buf: str, olo: int, ohi: int, severity: str,
            used_ids: dict) -> None:
    if y.iseq > x.iseq:  # name the pair in program order, however the pipes happened to run it
        y, x, yw, xw = x, y, xw, yw
    kind = KIND_OF[(yw, xw)] if yw else "WAR"
    core.findings.add(
        "race", severity,
        f"{kind} on {buf} bytes [{olo}, {ohi}): {y.name} ({y.pipe}, {y.loc}) "
        f"{'writes' if yw else 'reads'} and {x.name} ({x.pipe}, {x.loc}) "
        f"{'writes' if xw else 'reads'} with no synchronisation ordering them; "
        f"fix: {_fix(y, x, used_ids)}",
        [y.loc, x.loc], [y.pipe, x.pipe], cycle=x.start,
        key=(kind, y.loc.line, y.loc.col, x.loc.line, x.loc.col),
        detail={"kind": kind, "buffer": buf, "bytes": [olo, ohi],
                "first": {"op": y.name, "pipe": y.pipe, "line": str(y.loc)},
                "second": {"op": x.name, "pipe": x.pipe, "line": str(x.loc)}},
    )


def detect(core, severity: str = "error") -> int:
    """Add a finding per racing pair of source lines; return the number of racing pairs seen."""
    vc = clocks(core)
    used_ids: dict[tuple, set] = {}
    for ins in core.trace_log:
        if ins.flag is not None:
            used_ids.setdefault(ins.flag[:2], set()).add(ins.flag[2])
    # per buffer: earlier reads and earlier writes still worth comparing against, (lo, hi, instr)
    live: dict[str, tuple[list, list]] = {}
    races = 0
    ordered = sorted((i for i in core.trace_log if i.start >= 0 and (i.reads or i.writes)),
                     key=lambda i: (i.start, i.seq))
    for x in ordered:
        kx = vc[id(x)]
        accesses = [(b, lo, hi, fp, False) for b, lo, hi, fp in x.reads] + [
            (b, lo, hi, fp, True) for b, lo, hi, fp in x.writes]
        for buf, lo, hi, fp, xw in accesses:
            reads, writes = live.setdefault(buf, ([], []))
            # a read conflicts with earlier writes; a write with earlier reads and writes
            for entries, yw in ((writes, True), (reads, False)) if xw else ((writes, True),):
                keep = []
                for e in entries:
                    elo, ehi, y, efp = e
                    if ehi <= lo or elo >= hi or y is x or not footprints_overlap(fp, efp):
                        keep.append(e)
                        continue
                    ordered_before = kx.get(y.pipe, 0) > y.pidx
                    if not ordered_before:
                        races += 1
                        _report(core, y, x, yw, xw, buf, max(lo, elo), min(hi, ehi), severity, used_ids)
                    # an older access covered by a later write ordered after it can go
                    if not (xw and ordered_before and covers(lo, hi, fp, elo, ehi, efp)):
                        keep.append(e)
                entries[:] = keep
            if not xw:  # earlier reads covered by this ordered read are redundant
                reads[:] = [e for e in reads
                            if not (covers(lo, hi, fp, e[0], e[1], e[3]) and e[2] is not x
                                    and kx.get(e[2].pipe, 0) > e[2].pidx)]
            (writes if xw else reads).append((lo, hi, x, fp))
    return races


__all__ = ["OP", "WAIT", "clocks", "detect"]
