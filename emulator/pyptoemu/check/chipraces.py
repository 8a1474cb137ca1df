"""Happens-before races across the cores of a chip (GM shared by every core).

Each core's own ordering is that of :mod:`pyptoemu.check.races` (program order, barriers, flags,
the scalar unit). Cores are ordered against each other only by cross-core hand-offs: a FIFO push
and the pop it fed, a slot release and the push that reuses the slot, ``sync.set`` and the
``sync.wait`` it released, an async copy and its wait. Every instruction's clock is its core's
vector clock over its own pipes plus, for every other core it has heard of through such hand-offs,
how many of that core's instructions per pipe are known complete.

Two accesses to overlapping bytes, at least one a write, with no such ordering are a race, within
a core (as on one core) or between cores (two blocks writing the same GM window, one reading what
another writes). Atomic adds (``tstore`` with ``atomicType = atomic_add``) accumulate in whatever
order they complete, so two of them never race; a plain access and an atomic one do.
"""

from __future__ import annotations

from ptoisa.text import ast as A
from pyptoemu.check.races import (
    PIPE_INDEX,
    ZERO,
    _bump,
    _fix,
    _join,
    _known,
    _Live,
    _releasers,
    clocks,
    covers,
    footprints_overlap,
)
from pyptoemu.core.pipe import BARRIER, SET, WAIT, XSET, XWAIT, Instr

KIND_OF = {(True, False): "RAW", (False, True): "WAR", (True, True): "WAW"}


def _merge(a: dict | None, b: dict | None) -> dict | None:
    if not b or a is b:
        return a
    if not a:
        return b
    out = dict(a)
    for k, v in b.items():
        out[k] = _join(out[k], v) if k in out else v
    return out


class _ChipClocks:
    """Clocks ``(local, remote)`` of every recorded instruction of every core, keyed by id."""

    def __init__(self, cores: list) -> None:
        self.vc: dict[int, tuple] = {}
        self.epoch_vc = {id(c): [(ZERO, None)] for c in cores}
        self.prev: dict[tuple, Instr] = {}
        self.in_order = {p: o for p, o in cores[0].machine.in_order.items()}
        self.in_order["S"] = True
        instrs = [i for c in cores for i in c.trace_log if i.start >= 0]
        for ins in sorted(instrs, key=lambda i: (i.start, i.seq)):
            self.vc[id(ins)] = self._clock(ins)

    def _release(self, base: tuple, s: Instr, core) -> tuple:
        vs = self.vc.get(id(s))
        if vs is None:
            return base
        local, remote = base
        if s.core is core:
            return _bump(_join(local, vs[0]), s.pipe, _known(s)), _merge(remote, vs[1])
        remote = _merge(_merge(remote, vs[1]), {s.core.label: _bump(vs[0], s.pipe, _known(s))})
        if remote and core.label in remote:  # what another core knows about this one
            remote = dict(remote)
            local = _join(local, remote.pop(core.label))
        return local, remote

    def _scalar(self, core, e: int) -> tuple:
        evc = self.epoch_vc[id(core)]
        epochs = core.scalar.epochs
        while len(evc) <= e:
            kind, what = epochs[len(evc) - 1]
            last = evc[-1]
            if kind == "wait":
                for s in _releasers(what):
                    last = self._release(last, s, core)
            elif kind == "all":
                local = last[0]
                for pipe, n in what.items():
                    local = _bump(local, pipe, n)
                last = (local, last[1])
            else:
                last = (_bump(last[0], "S", what), last[1])
            evc.append(last)
        return evc[e]

    def _clock(self, ins: Instr) -> tuple:
        core, p = ins.core, ins.pipe
        local, remote = self._scalar(core, ins.sepoch)
        before = self.prev.get((id(core), p))
        if before is not None:
            bl, br = self.vc[id(before)]
            local, remote = _join(local, bl), _merge(remote, br)
            if before.kind == BARRIER:
                local = _bump(local, p, before.pidx)
            elif self.in_order.get(p, True):
                local = _bump(local, p, before.pidx + 1)
        if ins.kind in (BARRIER, SET, XSET):
            local = _bump(local, p, ins.pidx)
        base = (local, remote)
        if ins.kind in (WAIT, XWAIT):
            for s in _releasers(ins):
                base = self._release(base, s, core)
        self.prev[(id(core), p)] = ins
        return base


def is_atomic(ins: Instr) -> bool:
    """A ``tstore`` with ``atomicType = atomic_add``: its GM write accumulates."""
    op = getattr(ins.bound, "op", None)
    if op is None:
        return False
    attr = op.attrs.get("atomicType")
    return isinstance(attr, A.EnumAttr) and attr.value == "atomic_add"


def _who(ins: Instr) -> str:
    return f"{ins.core.label} {ins.pipe}"


def _report(findings, y: Instr, x: Instr, yw: bool, xw: bool, buf: str, olo: int, ohi: int, severity: str,
            used_ids: dict, n_ids: int) -> None:
    cross = y.core is not x.core
    if not cross and y.iseq > x.iseq or cross and (y.start, y.seq) > (x.start, x.seq):
        y, x, yw, xw = x, y, xw, yw
    kind = KIND_OF[(yw, xw)] if yw else "WAR"
    if cross:
        atomic = " (one of them an atomic add, the other not)" if is_atomic(y) != is_atomic(x) else ""
        fix = ("order them across cores (a cube<->vector FIFO or pto.sync.set / pto.sync.wait), give each "
               "block its own window (get_block_idx), or accumulate with atomicType = atomic_add")
        msg = (f"{kind} on {buf} bytes [{olo}, {ohi}) between cores: {y.name} ({_who(y)}, block "
               f"{y.core.block_of(y)}, {y.loc}) {'writes' if yw else 'reads'} and {x.name} ({_who(x)}, block "
               f"{x.core.block_of(x)}, {x.loc}) {'writes' if xw else 'reads'} with nothing ordering them"
               f"{atomic}; fix: {fix}")
        key = ("x", kind, y.loc.line, y.loc.col, x.loc.line, x.loc.col)
    else:
        msg = (f"{kind} on {buf} bytes [{olo}, {ohi}): {y.name} ({_who(y)}, {y.loc}) "
               f"{'writes' if yw else 'reads'} and {x.name} ({_who(x)}, {x.loc}) "
               f"{'writes' if xw else 'reads'} with no synchronisation ordering them; "
               f"fix: {_fix(y, x, used_ids, n_ids)}")
        key = (kind, y.loc.line, y.loc.col, x.loc.line, x.loc.col)
    findings.add("race", severity, msg, [y.loc, x.loc], [f"{y.core.label}:{y.pipe}", f"{x.core.label}:{x.pipe}"],
                 cycle=x.start, key=key,
                 detail={"kind": kind, "buffer": buf, "bytes": [olo, ohi], "cross_core": cross,
                         "first": {"op": y.name, "core": y.core.label, "pipe": y.pipe, "line": str(y.loc)},
                         "second": {"op": x.name, "core": x.core.label, "pipe": x.pipe, "line": str(x.loc)}})


def _chip_clocks(chip) -> dict:
    if chip.crosscore.active:
        return _ChipClocks(chip.cores).vc
    # no cross-core hand-off happened: each core's own clocks, and no core knows another's
    return {k: (v, None) for c in chip.cores for k, v in clocks(c).items()}


def _ordered(y: Instr, x: Instr, pipe_i: int, pidx: int, klocal: tuple, kremote: dict | None) -> bool:
    """Is ``y`` (instruction ``pidx`` of its pipe) known complete when ``x`` starts?"""
    if y.core is x.core:
        return klocal[pipe_i] > pidx
    known = kremote.get(y.core.label) if kremote else None
    return known is not None and known[pipe_i] > pidx


def detect_chip(chip, severity: str = "error") -> int:
    """Add a finding per racing pair of source lines on the whole chip; the number of racing pairs."""
    cores = chip.cores
    vc = _chip_clocks(chip)
    used_ids: dict[tuple, set] = {}
    for ins in (i for c in cores for i in c.trace_log if i.kind in (SET, WAIT)):
        used_ids.setdefault(ins.flag[:2], set()).add(ins.flag[2])
    n_ids = chip.machine.event_ids
    live: dict[str, tuple[_Live, _Live]] = {}
    races = 0
    ordered = sorted((i for c in cores for i in c.trace_log if i.start >= 0 and (i.reads or i.writes)),
                     key=lambda i: (i.start, i.seq))
    for x in ordered:
        klocal, kremote = vc[id(x)]
        x_atomic = bool(x.writes) and is_atomic(x)
        accesses = [(b, lo, hi, fp, False) for b, lo, hi, fp in x.reads] + [
            (b, lo, hi, fp, True) for b, lo, hi, fp in x.writes]
        for buf, lo, hi, fp, xw in accesses:
            key = buf if buf.startswith("arg") else f"{x.core.label}:{buf}"  # GM is shared, the rest per core
            pair = live.get(key)
            if pair is None:
                pair = live[key] = (_Live(), _Live())
            reads, writes = pair
            for entries, yw in ((writes, True), (reads, False)) if xw else ((writes, True),):
                pruned = False
                for r in entries.overlapping(lo, hi, fp):
                    elo, ehi, _, _, pipe_i, pidx, y, efp, _ = r
                    if y is x or not footprints_overlap(fp, efp):
                        continue
                    if not _ordered(y, x, pipe_i, pidx, klocal, kremote):
                        if xw and yw and x_atomic and is_atomic(y):
                            continue  # atomic adds accumulate in completion order: no race
                        races += 1
                        _report(chip.findings, y, x, yw, xw, buf, max(lo, elo), min(hi, ehi), severity,
                                used_ids, n_ids)
                    elif xw and covers(lo, hi, fp, elo, ehi, efp):
                        r[3] = False
                        pruned = True
                if pruned:
                    entries.compact()
            (writes if xw else reads).add(lo, hi, xw, x, fp)
    return races


__all__ = ["PIPE_INDEX", "detect_chip", "is_atomic"]
