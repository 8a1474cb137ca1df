"""An independent happens-before oracle for testing the race detector.

Where the detector uses vector clocks, this builds the explicit graph of start/end events of every
recorded instruction and answers reachability with ancestor bitsets. Same hardware rules (see
pyptoemu/check/races.py), different mechanism: if both agree on every mutant kernel, the clocks are
right.
"""

from __future__ import annotations

from collections import defaultdict

from pyptoemu.core.pipe import BARRIER, OP, SET, WAIT


def _overlap(a, b) -> bool:
    """Exact GM element overlap, enumerated independently of the detector's helper."""
    if a is None or b is None:
        return True

    def elems(fp):
        base, sizes, strides = fp
        out = {base}
        for z, st in zip(sizes, strides, strict=False):
            out = {e + k * st for e in out for k in range(z)}
        return out

    return bool(elems(a) & elems(b))


class _Graph:
    """Start/end events of instructions (and the scalar unit's epochs) as nodes, happens-before as edges."""

    def __init__(self) -> None:
        self.nodes: dict[tuple, int] = {}
        self.edges: list[tuple[int, int]] = []

    def node(self, key) -> int:
        if key not in self.nodes:
            self.nodes[key] = len(self.nodes)
        return self.nodes[key]

    def edge(self, a, b) -> None:
        self.edges.append((self.node(a), self.node(b)))

    def ancestors(self) -> list[int]:
        """Bitset of the ancestors of every node (the graph is a DAG)."""
        n = len(self.nodes)
        succ = defaultdict(list)
        indeg = [0] * n
        for a, b in self.edges:
            succ[a].append(b)
            indeg[b] += 1
        anc = [0] * n
        stack = [i for i in range(n) if indeg[i] == 0]
        while stack:
            a = stack.pop()
            mine = anc[a] | (1 << a)
            for b in succ[a]:
                anc[b] |= mine
                indeg[b] -= 1
                if indeg[b] == 0:
                    stack.append(b)
        return anc


def _pipe_edges(g: _Graph, recs: list, in_order: dict) -> dict:
    """In-order pipes, set/barrier completion after earlier work, wait after the set that released it."""
    by_pipe = defaultdict(list)
    for r in recs:
        g.edge(("s", id(r)), ("e", id(r)))
        by_pipe[r.pipe].append(r)
    for pipe, rs in by_pipe.items():
        rs.sort(key=lambda r: (r.pidx, r.seq) if pipe != "S" else r.seq)
        for k, x in enumerate(rs):
            if k:
                prev = rs[k - 1]
                g.edge(("s", id(prev)), ("s", id(x)))
                if pipe == "S" or in_order.get(pipe, True) or prev.kind in (SET, WAIT, BARRIER):
                    g.edge(("e", id(prev)), ("s", id(x)))
            if x.kind in (SET, BARRIER):
                for y in rs[:k]:
                    g.edge(("e", id(y)), ("e", id(x)))
            if x.kind == WAIT and x.released_by is not None:
                g.edge(("e", id(x.released_by)), ("s", id(x)))
    return by_pipe


def _epoch_edges(g: _Graph, core, recs: list, by_pipe: dict) -> None:
    """The scalar unit's sync points, in program order."""
    for e, (kind, what) in enumerate(core.scalar.epochs):
        ep = ("epoch", e)
        if e:
            g.edge(("epoch", e - 1), ep)
        if kind == "wait":
            g.edge(("e", id(what)), ep)
        elif kind == "all":
            for r in recs:
                if r.pipe != "S" and r.pidx < what.get(r.pipe, 0):
                    g.edge(("e", id(r)), ep)
        else:
            for r in by_pipe.get("S", []):
                if r.kind == OP and r.pidx < what:
                    g.edge(("e", id(r)), ep)
    for r in recs:
        if r.sepoch > 0:
            g.edge(("epoch", r.sepoch - 1), ("s", id(r)))


def unordered_conflicts(core) -> set[tuple]:
    """(first loc, second loc) of every pair of conflicting accesses not ordered by happens-before."""
    recs = [i for i in core.trace_log if i.start >= 0]
    g = _Graph()
    by_pipe = _pipe_edges(g, recs, dict(core.machine.in_order))
    _epoch_edges(g, core, recs, by_pipe)
    anc = g.ancestors()

    def hb(a, b) -> bool:
        return bool(anc[g.nodes[("s", id(b))]] >> g.nodes[("e", id(a))] & 1)

    accesses = defaultdict(list)
    for r in recs:
        for buf, lo, hi, fp in r.reads:
            accesses[buf].append((lo, hi, False, r, fp))
        for buf, lo, hi, fp in r.writes:
            accesses[buf].append((lo, hi, True, r, fp))
    out: set[tuple] = set()
    for acc in accesses.values():
        acc.sort(key=lambda t: (t[3].start, t[3].seq))
        for i, (lo1, hi1, w1, a, fp1) in enumerate(acc):
            for lo2, hi2, w2, b, fp2 in acc[i + 1:]:
                if a is b or not (w1 or w2) or hi1 <= lo2 or hi2 <= lo1 or not _overlap(fp1, fp2):
                    continue
                if not hb(a, b) and not hb(b, a):
                    out.add((str(a.loc), str(b.loc)))
    return out
