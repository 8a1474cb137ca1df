"""Happens-before race detector, streaming over the run as it happens, for one core or a chip.

Vector clocks over the pipes: ``vc[P] = n`` means "the first n instructions issued to pipe P are
known complete". Edges, as the hardware guarantees them:

* program order on a pipe the machine declares in order (its results are forwarded along the pipe);
  on a pipe that is not in order (V on A2/A3) program order orders only the starts, not the writes;
* ``barrier <P>``: every earlier P instruction completes before any later one starts;
* ``set_flag``: every earlier instruction of its source pipe has completed; the ``wait_flag`` that
  consumes it inherits that knowledge, and so does every later instruction of the waiting pipe;
* the scalar unit: an instruction issued after a ``wait_flag`` on PIPE_S, a full barrier or a scalar
  memory access is ordered after it.

Cores are ordered against each other only by cross-core hand-offs: a FIFO push and the pop it fed,
a slot release and the push that reuses the slot, ``sync.set`` and the ``sync.wait`` it released,
an async copy and its wait. So an instruction's clock is ``(local, remote)``: its core's vector
clock over its own pipes, and for every other core it has heard of, how many of that core's
instructions per pipe are known complete.

Any two accesses to overlapping bytes of one buffer (UB, L1, L0A/B/C, bias per core; GM per argument,
shared by every core), at least one a write, that are not ordered by these edges are a race. Atomic
adds (``tstore`` with ``atomicType = atomic_add``) accumulate in whatever order they complete, so two
of them never race; a plain access and an atomic one do. A race is reported once per pair of source
lines, with a count and the smallest fix.

The detector sees each instruction once, in start order, while the run goes on
(:class:`pyptoemu.core.recorder.Recorder`), and keeps only what a later access can still race with:
an earlier access is dropped once a later write covering it is ordered after it, or once every pipe
that can still access memory knows it complete (its clock has passed it: whatever those pipes run
later is ordered after it). So memory follows what is live, not the length of the run.
"""

from __future__ import annotations

from ptoisa.text import ast as A
from pyptoemu.check.accessruns import AccessRun
from pyptoemu.check.footprints import LiveAccesses, covers, footprints_overlap
from pyptoemu.core.pipe import BARRIER, OP, SET, WAIT, XSET, XWAIT, Instr

KIND_OF = {(True, False): "RAW", (False, True): "WAR", (True, True): "WAW"}
PIPES = ("S", "MTE1", "MTE2", "MTE3", "V", "M", "FIX")
PIPE_INDEX = {p: i for i, p in enumerate(PIPES)}
ZERO = (0,) * len(PIPES)
INFINITE = (float("inf"),) * len(PIPES)
PRUNE_EVERY = 1024  # accesses between two passes that drop what every pipe knows complete


def _join(a: tuple, b: tuple) -> tuple:
    return a if a == b else tuple(map(max, a, b))


def _bump(vc: tuple, pipe: str, n: int) -> tuple:
    """``vc`` with at least the first ``n`` instructions of ``pipe`` known complete."""
    i = PIPE_INDEX[pipe]
    return vc if vc[i] >= n else vc[:i] + (n,) + vc[i + 1:]


def _merge(a: dict | None, b: dict | None) -> dict | None:
    if not b or a is b:
        return a
    if not a:
        return b
    out = dict(a)
    for k, v in b.items():
        out[k] = _join(out[k], v) if k in out else v
    return out


def _releasers(ins: Instr) -> list:
    """The instructions whose completion released a wait (one set_flag, or a cross-core list)."""
    r = ins.released_by
    return [] if r is None else (r if isinstance(r, list) else [r])


def _known(s: Instr) -> int:
    """How many of ``s``'s pipe's instructions a waiter released by ``s`` knows complete: a set
    fires after the earlier ones; a FIFO push or DMA copy releases its waiter at its own completion."""
    return s.pidx + 1 if s.kind == OP else s.pidx


def is_atomic(ins: Instr) -> bool:
    """A ``tstore`` with ``atomicType = atomic_add``: its GM write accumulates."""
    op = getattr(ins.bound, "op", None)
    if op is None:
        return False
    attr = op.attrs.get("atomicType")
    return isinstance(attr, A.EnumAttr) and attr.value == "atomic_add"


ANY = "*"  # an operand whose spec names no location: it may be in any buffer
GM = "arg"  # the key of every GM buffer (one per pointer argument)
MEMORY_KINDS = frozenset({"tile", "view", "handle"})


def access_map(module: A.Module, isa, machine) -> dict[str, frozenset]:
    """Which buffers each pipe can access in ``module``: for every op, each pipe its spec's rule can
    pick, with every location its operands' specs allow (``gm`` is :data:`GM`, a tile location the
    machine's buffer name, an operand with no locations :data:`ANY`). Sync ops access nothing."""
    names = {loc: spec.name for loc, spec in machine.buffers.items()}
    out: dict[str, set] = {}
    stack = [f.body for f in module.functions]
    while stack:
        region = stack.pop()
        for op in region.ops:
            stack.extend(op.regions)
            spec = isa.get(op.name) if op.name.startswith("pto.") else None
            if spec is None:
                continue
            where: set[str] = set()
            for operand in (*spec.ins, *spec.outs):
                if not MEMORY_KINDS & set(operand.kinds or ()):
                    continue
                if not operand.locs:
                    where.add(ANY)
                    continue
                where.update(GM if loc == "gm" else names.get(loc, ANY) for loc in operand.locs)
            if not where:
                continue
            for pipe in spec.pipe.pipes():
                if pipe in PIPE_INDEX:
                    out.setdefault(pipe, set()).update(where)
    return {p: frozenset(b) for p, b in out.items()}


class Access:
    """What the detector keeps of an instruction that accessed memory (the instruction itself can go)."""

    __slots__ = ("atomic", "core", "iseq", "loc", "name", "pidx", "pipe", "pipe_i", "seq", "start")

    def __init__(self, ins: Instr, atomic: bool) -> None:
        self.name, self.pipe, self.loc, self.iseq = ins.name, ins.pipe, ins.loc, ins.iseq
        self.core, self.start, self.seq, self.pidx = ins.core, ins.start, ins.seq, ins.pidx
        self.pipe_i = PIPE_INDEX[ins.pipe]
        self.atomic = atomic

    def member(self, pidx: int) -> Access:
        """This access as made again by a later iteration of its block (an :class:`AccessRun` member)."""
        out = object.__new__(Access)
        for name in Access.__slots__:
            setattr(out, name, getattr(self, name))
        out.pidx = pidx
        return out


class _Clocks:
    """The clock ``(local, remote)`` of each instruction at its start, computed in start order and
    kept on the instruction (``Instr.vc``) for the waits it releases."""

    def __init__(self, in_order: dict) -> None:
        self.in_order = dict(in_order)
        self.in_order["S"] = True
        self.epoch_vc: dict[int, list] = {}  # id(core) -> [first epoch kept, clocks of epochs from there]
        self.last: dict[tuple, tuple] = {}  # (id(core), pipe) -> (clock, kind, pidx) of its latest instruction

    def _release(self, base: tuple, s: Instr, core) -> tuple:
        vs = s.vc
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

    def epochs_of(self, core) -> list:
        got = self.epoch_vc.get(id(core))
        if got is None:
            got = self.epoch_vc[id(core)] = [0, [(ZERO, None)]]
        return got

    def scalar(self, core, e: int) -> tuple:
        """The clock the scalar unit had at epoch ``e`` (what its sync points made known)."""
        base_vcs = self.epochs_of(core)
        base, evc = base_vcs
        if e < base:  # only instructions without accesses name a forgotten epoch (a full barrier's record)
            return ZERO, None
        epochs = core.scalar.epochs
        while base + len(evc) <= e:
            kind, what = epochs[base + len(evc) - 1]
            last = evc[-1]
            if kind == "wait":
                for s in _releasers(what):
                    last = self._release(last, s, core)
            elif kind == "all":
                local = last[0]
                for pipe, n in what.items():
                    local = _bump(local, pipe, n)
                last = (local, last[1])
            else:  # "s": scalar accesses so far
                last = (_bump(last[0], "S", what), last[1])
            evc.append(last)
        return evc[e - base]

    def forget(self, core, before: int) -> None:
        """Drop the clocks of epochs before ``before`` (the newest computed one always stays)."""
        base_vcs = self.epochs_of(core)
        base, evc = base_vcs
        n = min(before - base, len(evc) - 1)
        if n > 0 and n * 2 >= len(evc):
            del evc[:n]
            base_vcs[0] = base + n

    def clock(self, ins: Instr) -> tuple:
        core, p = ins.core, ins.pipe
        local, remote = self.scalar(core, ins.sepoch)
        key = (id(core), p)
        before = self.last.get(key)
        if before is not None:
            (bl, br), bkind, bpidx = before
            local, remote = _join(local, bl), _merge(remote, br)
            if bkind == BARRIER:
                local = _bump(local, p, bpidx)
            elif self.in_order.get(p, True):
                local = _bump(local, p, bpidx + 1)
        if ins.kind in (BARRIER, SET, XSET):
            local = _bump(local, p, ins.pidx)
        base = (local, remote)
        if ins.kind in (WAIT, XWAIT):
            for s in _releasers(ins):
                base = self._release(base, s, core)
        self.last[key] = (base, ins.kind, ins.pidx)
        return base

    def floor(self, core, pipes) -> tuple | None:
        """A clock every instruction ``core`` runs from now on on ``pipes`` is at least (local part):
        each pipe's latest clock joined with the oldest scalar epoch an instruction can still name."""
        epoch_floor = self.epochs_of(core)[1][0][0]
        out = None
        for p in pipes:
            last = self.last.get((id(core), p))
            vc = epoch_floor if last is None else _join(last[0][0], epoch_floor)
            out = vc if out is None else tuple(map(min, out, vc))
        return out

    def remote_floor(self, core, pipes) -> dict:
        """What every instruction ``core`` runs from now on on ``pipes`` will know of each other
        core (label -> its clock over that core's pipes): the remote part of :meth:`floor`."""
        epoch_remote = self.epochs_of(core)[1][0][1] or {}
        out: dict | None = None
        for p in pipes:
            last = self.last.get((id(core), p))
            known = _merge(dict(epoch_remote), last[0][1] if last is not None else None) or {}
            if out is None:
                out = dict(known)
            else:
                out = {k: tuple(map(min, v, known[k])) for k, v in out.items() if k in known}
        return out or {}


class _Race:
    """The first racing pair seen for one pair of source lines (named in program order), and how
    many pairs followed: formatted once the run is over (the wording depends on the core count)."""

    __slots__ = ("buf", "count", "cycle", "hi", "kind", "lo", "x", "xw", "y", "yw")

    def __init__(self, y: Access, x: Access, yw: bool, xw: bool, buf: str, lo: int, hi: int, cycle: int):
        self.y, self.x, self.yw, self.xw, self.buf = y, x, yw, xw, buf
        self.lo, self.hi, self.cycle, self.count = lo, hi, cycle, 1
        self.kind = KIND_OF[(yw, xw)] if yw else "WAR"


class RaceDetector:
    """Follows a run (a :class:`~pyptoemu.core.recorder.Recorder` consumer) and adds a finding per
    racing pair of source lines when it finishes. ``chip`` is the chip (or lone core) that runs."""

    def __init__(self, chip, severity: str = "error", access: dict[str, frozenset] | None = None) -> None:
        self.chip = chip
        self.machine = chip.machine
        self.findings = chip.findings
        self.severity = severity
        # pipe -> the buffers it can access (access_map); None: any pipe, any buffer
        self.access = {p: frozenset({ANY}) for p in PIPES} if access is None else dict(access)
        self.clocks = _Clocks(chip.machine.in_order)
        self.used_ids: dict[tuple, set] = {}
        self.live: dict[str, tuple[LiveAccesses, LiveAccesses]] = {}
        self.races: dict[tuple, _Race] = {}
        self.pairs = 0
        self.atomic_ops: dict[int, bool] = {}
        self.since_prune = 0
        self.runs: dict[tuple, dict] = {}  # (GM buffer, write) -> run key -> the row of its open run
        self.chains: dict[tuple, dict] = {}  # (GM buffer, write) -> run key -> rows of its open outer-level runs
        self.peak_live = 0  # the most entries kept after a pruning pass (benchmarks/memory_growth.py)

    # the recorder's hooks -------------------------------------------------------------------

    def epochs_needed(self, core) -> int:
        """The oldest scalar epoch whose entry the clocks still need (to compute the next ones)."""
        base, evc = self.clocks.epochs_of(core)
        return base + len(evc) - 1

    def epochs_dropped(self, core, before: int) -> None:
        self.clocks.forget(core, before)

    def consume(self, x: Instr) -> None:
        x.vc = kx = self.clocks.clock(x)
        if x.kind in (SET, WAIT):
            self.used_ids.setdefault(x.flag[:2], set()).add(x.flag[2])
        if not (x.reads or x.writes):
            return
        self._expect(x)
        xa = Access(x, bool(x.writes) and self._atomic(x))
        for buf, lo, hi, fp in x.reads:
            self._access(xa, kx, buf, lo, hi, fp, False)
        for buf, lo, hi, fp in x.writes:
            self._access(xa, kx, buf, lo, hi, fp, True)
        self.since_prune += 1
        if self.since_prune >= PRUNE_EVERY:
            self.forget_known()

    def _expect(self, x: Instr) -> None:
        """An access the specs did not foresee (a pipe or buffer no op's spec names): watched from
        now on, so later pruning waits for that pipe too."""
        can = self.access.get(x.pipe, frozenset())
        if ANY in can:
            return
        for buf, *_ in (*x.reads, *x.writes):
            key = GM if buf.startswith(GM) else buf
            if key not in can:
                can = self.access[x.pipe] = can | {key}

    def _atomic(self, x: Instr) -> bool:
        op = getattr(x.bound, "op", None)
        hit = self.atomic_ops.get(id(op))
        if hit is None:
            hit = self.atomic_ops[id(op)] = is_atomic(x)
        return hit

    def _access(self, xa: Access, kx: tuple, buf: str, lo: int, hi: int, fp, xw: bool) -> None:
        key = buf if buf.startswith("arg") else f"{xa.core.label}:{buf}"  # GM is shared, the rest per core
        pair = self.live.get(key)
        if pair is None:
            pair = self.live[key] = (LiveAccesses(), LiveAccesses())
        reads, writes = pair
        klocal, kremote = kx
        for entries, yw in ((writes, True), (reads, False)) if xw else ((writes, True),):
            pruned = False
            for r in entries.overlapping(lo, hi, fp):
                elo, ehi, _, _, pipe_i, pidx, y, efp, _ = r
                if y.__class__ is AccessRun:
                    if y.core is not xa.core:  # the run's own core is ordered after all of it
                        self._against_run(xa, kremote, y, buf, lo, hi, fp, xw, yw)
                    continue
                if y is xa or not footprints_overlap(fp, efp):
                    continue
                if y.core is xa.core:
                    ordered = klocal[pipe_i] > pidx
                else:
                    known = kremote.get(y.core.label) if kremote else None
                    ordered = known is not None and known[pipe_i] > pidx
                if not ordered:
                    if xw and yw and xa.atomic and y.atomic:
                        continue  # atomic adds accumulate in completion order: no race
                    self._race(y, xa, yw, xw, buf, max(lo, elo), min(hi, ehi))
                elif xw and covers(lo, hi, fp, elo, ehi, efp):
                    # an older access covered by a later write ordered after it can go
                    r[3] = False
                    pruned = True
            if pruned:
                entries.compact()
        (writes if xw else reads).add(lo, hi, xw, xa, fp)

    def _against_run(self, xa: Access, kremote: dict | None, run: AccessRun, buf: str, lo: int, hi: int,
                     fp, xw: bool, yw: bool) -> None:
        """``xa`` (another core) against each member of ``run``: what the members' own entries did."""
        known = kremote.get(run.core.label) if kremote else None
        k = known[run.first.pipe_i] if known is not None else 0
        if k > run.last_pidx:
            return
        both_atomic = xw and yw and xa.atomic and run.first.atomic
        for y, mlo, mhi in run.members(lo, hi, fp, k):
            if not both_atomic:
                self._race(y, xa, yw, xw, buf, max(lo, mlo), min(hi, mhi))

    def _race(self, y: Access, x: Access, yw: bool, xw: bool, buf: str, lo: int, hi: int) -> None:
        self.pairs += 1
        cross = y.core is not x.core
        if not cross and y.iseq > x.iseq or cross and (y.start, y.seq) > (x.start, x.seq):
            y, x, yw, xw = x, y, xw, yw  # name the pair in program order, however the pipes ran it
        cycle = x.start
        kind = KIND_OF[(yw, xw)] if yw else "WAR"
        key = ("x", kind) if cross else (kind,)
        key = (*key, y.loc.line, y.loc.col, x.loc.line, x.loc.col)
        hit = self.races.get(key)
        if hit is not None:
            hit.count += 1
        else:
            self.races[key] = _Race(y, x, yw, xw, buf, lo, hi, cycle)

    def forget_known(self) -> None:
        """Drop every live access no later access can race with, and fold the GM accesses that only
        other cores can still race with into runs (:mod:`pyptoemu.check.accessruns`).

        A tile buffer belongs to one core: an access goes once every pipe of that core able to
        access the buffer knows it complete. GM is shared: an access goes once its own core knows
        it complete and every other core that can still run has learnt of it through hand-offs."""
        self.since_prune = 0
        cores = list(getattr(self.chip, "cores", [self.chip]))
        gm_view = None
        for key, pair in self.live.items():
            if key.startswith(GM):
                if gm_view is None:
                    gm_view = self._gm_view(cores)
                for write, entries in enumerate(pair):
                    self._forget_gm((key, write), entries, *gm_view)
                continue
            label, _, buf = key.partition(":")
            core = next((c for c in cores if c.label == label), None)
            if core is None:
                continue
            floor = self.clocks.floor(core, self._pipes_of(core, buf))
            if floor is None:
                continue
            for entries in pair:
                entries.forget_known(lambda a, f=floor: f[a.pipe_i] > a.pidx)
        kept = sum(len(e.rows) for pair in self.live.values() for e in pair)
        self.peak_live = max(self.peak_live, kept)

    def _pipes_of(self, core, buf: str) -> list[str]:
        """The pipes of ``core`` that can still access ``buf``."""
        return [p for p, can in self.access.items() if (buf in can or ANY in can) and (p == "S" or p in core.pipes)]

    def _gm_view(self, cores: list) -> tuple[dict, dict]:
        """Per core (by label): what its own pipes able to access GM know complete (None: it runs
        nothing more), and what every other core that can still run knows of it (None: some core
        knows nothing of it). Every core a block will run on exists from the start of the run
        (:meth:`pyptoemu.core.chip.Chip.run`), so no core yet to come can know less."""
        running = getattr(self.chip, "still_running", None)
        ids = None if running is None else running()
        live = [c for c in cores if ids is None or id(c) in ids]
        own: dict[str, tuple | None] = {}
        remote: dict[str, dict] = {}
        for c in cores:
            pipes = self._pipes_of(c, GM)
            if c not in live:
                own[c.label] = None
            elif pipes:
                own[c.label] = self.clocks.floor(c, pipes)
                remote[c.label] = self.clocks.remote_floor(c, pipes)
            else:  # no pipe of this core touches GM: it neither makes nor settles GM accesses
                own[c.label], remote[c.label] = ZERO, {}
        others: dict[str, tuple | None] = {}
        for c in cores:
            known = INFINITE
            for d in live:
                if known is None:
                    break
                if d is c:
                    continue
                got = remote[d.label].get(c.label)
                known = None if got is None else tuple(map(min, known, got))
            others[c.label] = known
        return own, others

    def _forget_gm(self, key: tuple, entries: LiveAccesses, own: dict, others: dict) -> None:
        """Drop the GM accesses every core knows complete; fold the settled rest into runs."""
        runs = self.runs.setdefault(key, {})
        chains = self.chains.setdefault(key, {})
        changed = dropped = False
        for r in entries.rows:
            if not r[3]:
                continue
            y = r[6]
            label = y.core.label
            mine = own.get(label, ZERO)
            pipe_i, pidx = r[4], r[5]
            if mine is not None and mine[pipe_i] <= pidx:
                continue  # its own core may still reach it unordered
            known = others.get(label)
            if known is not None and known[pipe_i] > pidx:
                r[3] = False
                dropped = True
                continue
            if y.__class__ is AccessRun:
                continue
            lo, hi, fp = r[0], r[1], r[7]
            rk = AccessRun.key(y, lo, hi, fp)
            head = runs.get(rk)
            if head is not None and head[3]:
                run = head[6]
                if run.__class__ is not AccessRun:
                    run = AccessRun(run, head[0], head[1], head[7])
                if run.extend(y, lo, hi, fp):
                    _hold(head, run, r[8])
                    r[3] = False
                    changed = True
                    continue
                changed |= _close(chains.setdefault(rk, []), head)
            runs[rk] = r
        if changed or dropped:
            entries.compact(reindex=changed)
        if dropped or len(runs) > 4 * len(entries.rows) + 64:
            for rk in [rk for rk, r in runs.items() if not r[3]]:
                del runs[rk]
            for rk in [rk for rk, chain in chains.items() if not any(r[3] for r in chain)]:
                del chains[rk]

    # the end --------------------------------------------------------------------------------

    def finish(self) -> None:
        """Add the findings, worded for one core or for a chip."""
        cores = list(getattr(self.chip, "cores", [self.chip]))
        many = len(cores) > 1
        n_ids = self.machine.event_ids
        for race in self.races.values():
            f = _report(self.findings, race, many, self.severity, self.used_ids, n_ids)
            f.count += race.count - 1


MAX_LEVELS = 4  # loop levels a run folds (deeper nests keep one run per outer iteration)


def _hold(row: list, run: AccessRun, box=False) -> None:
    """Make ``row`` the live entry of ``run``: its bytes the run's hull, its grid box (what
    :class:`LiveAccesses` filters 2-D windows by) grown to hold ``box`` (a new member's) too."""
    row[6] = run
    row[0], row[1] = run.hull()
    row[5], row[7] = run.last_pidx, None
    if box is not False:
        row[8] = _union(row[8], box)


def _union(a, b):
    """The grid box ``(grid, (row0, row1, col0, col1))`` holding both, or None (no common grid)."""
    if a is None or b is None or a[0] != b[0]:
        return None
    (r0, r1, c0, c1), (s0, s1, d0, d1) = a[1], b[1]
    return a[0], (min(r0, s0), max(r1, s1), min(c0, d0), max(c1, d1))


def _close(chain: list, row: list) -> bool:
    """The run (or lone access) of ``row`` is complete: make it the next iteration of the run one
    loop level up (``chain[k]``: the open run of level k + 2) if it has that shape; else that run
    is complete too and goes up a level itself, and ``row`` starts a new run at this level.
    Whether some entry changed its bytes."""
    k = 0
    changed = False
    while k < MAX_LEVELS:
        run = row[6]
        if run.__class__ is not AccessRun:
            run = AccessRun(run, row[0], row[1], row[7])
        parent = chain[k] if k < len(chain) else None
        if parent is not None and parent[3] and parent[6].absorb(run):
            _hold(parent, parent[6], row[8])
            row[3] = False
            return True
        _hold(row, run.promoted())
        if k < len(chain):
            chain[k] = row
        else:
            chain.append(row)
        changed = True
        if parent is None or not parent[3]:
            return changed
        row, k = parent, k + 1
    return changed


def _fix(y: Access, x: Access, used_ids: dict, n_ids: int) -> str:
    if y.pipe == x.pipe:
        return f"add `pto.barrier <PIPE_{x.pipe}>` between {y.loc} and {x.loc}"
    free = next((i for i in range(n_ids) if i not in used_ids.get((y.pipe, x.pipe), set())), 0)
    flag = f"[<PIPE_{y.pipe}>, <PIPE_{x.pipe}>, <EVENT_ID{free}>]"
    return f"add `pto.set_flag{flag}` after {y.loc} and `pto.wait_flag{flag}` before {x.loc}"


def _report(findings, race: _Race, many: bool, severity: str, used_ids: dict, n_ids: int):
    y, x, yw, xw, buf, kind = race.y, race.x, race.yw, race.xw, race.buf, race.kind
    olo, ohi = race.lo, race.hi
    cross = y.core is not x.core
    ydo, xdo = "writes" if yw else "reads", "writes" if xw else "reads"
    if not many:
        return findings.add(
            "race", severity,
            f"{kind} on {buf} bytes [{olo}, {ohi}): {y.name} ({y.pipe}, {y.loc}) {ydo} and {x.name} "
            f"({x.pipe}, {x.loc}) {xdo} with no synchronisation ordering them; "
            f"fix: {_fix(y, x, used_ids, n_ids)}",
            [y.loc, x.loc], [y.pipe, x.pipe], cycle=race.cycle,
            key=(kind, y.loc.line, y.loc.col, x.loc.line, x.loc.col),
            detail={"kind": kind, "buffer": buf, "bytes": [olo, ohi],
                    "first": {"op": y.name, "pipe": y.pipe, "line": str(y.loc)},
                    "second": {"op": x.name, "pipe": x.pipe, "line": str(x.loc)}})
    ywho, xwho = f"{y.core.label} {y.pipe}", f"{x.core.label} {x.pipe}"
    if cross:
        atomic = " (one of them an atomic add, the other not)" if y.atomic != x.atomic else ""
        fix = ("order them across cores (a cube<->vector FIFO or pto.sync.set / pto.sync.wait), give each "
               "block its own window (get_block_idx), or accumulate with atomicType = atomic_add")
        msg = (f"{kind} on {buf} bytes [{olo}, {ohi}) between cores: {y.name} ({ywho}, block "
               f"{y.core.block_of(y)}, {y.loc}) {ydo} and {x.name} ({xwho}, block "
               f"{x.core.block_of(x)}, {x.loc}) {xdo} with nothing ordering them{atomic}; fix: {fix}")
        key = ("x", kind, y.loc.line, y.loc.col, x.loc.line, x.loc.col)
    else:
        msg = (f"{kind} on {buf} bytes [{olo}, {ohi}): {y.name} ({ywho}, {y.loc}) {ydo} and {x.name} "
               f"({xwho}, {x.loc}) {xdo} with no synchronisation ordering them; "
               f"fix: {_fix(y, x, used_ids, n_ids)}")
        key = (kind, y.loc.line, y.loc.col, x.loc.line, x.loc.col)
    return findings.add(
        "race", severity, msg, [y.loc, x.loc], [f"{y.core.label}:{y.pipe}", f"{x.core.label}:{x.pipe}"],
        cycle=race.cycle, key=key,
        detail={"kind": kind, "buffer": buf, "bytes": [olo, ohi], "cross_core": cross,
                "first": {"op": y.name, "core": y.core.label, "pipe": y.pipe, "line": str(y.loc)},
                "second": {"op": x.name, "core": x.core.label, "pipe": x.pipe, "line": str(x.loc)}})


__all__ = ["PIPES", "PIPE_INDEX", "Access", "RaceDetector", "access_map", "is_atomic"]
