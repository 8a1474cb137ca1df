"""Runs of settled GM accesses: what loops on one core leave for the other cores to race with.

A GM access of core C that C itself knows complete (every pipe of C that can still touch GM is
ordered after it) can still race with an access of another core D until D learns of it through a
hand-off; in a kernel whose cores never hand anything to each other (an SPMD split of the rows)
that is never, so the race detector has to keep it to the end of the run. Loops make such
accesses in arithmetic progressions: iteration i of one source line reads or writes the window
``base0 + i * d_base`` (same sizes, strides and byte length), as instruction ``pidx0 + i * d_pidx``
of its pipe, all in one block. :class:`AccessRun` keeps such a progression as its first member and
one step per loop level (``dims``, outermost first): a run of a nested loop is a progression of
equal runs of the inner loop. The progression is the access's own (its bytes, its window, its
place on its pipe): the core's issue number is not part of it, since the scalar unit's stalls on a
full issue queue fall between iterations irregularly; a member takes the first member's issue
number, which names the same block (the block is part of what every member shares). So the live set of a long unsynchronised run
holds a few entries per (core, line), not one per iteration.

Every member can be rebuilt exactly (bytes, window, pipe index, the block it belongs to), so a run answers the race check member by member: a later access of another core
races with exactly the members the original entries would have raced with, counted alike and in
the same order. Only settled accesses join a run, so a later access of the run's own core is
ordered after every member.
"""

from __future__ import annotations

from pyptoemu.check.footprints import footprints_overlap

# one loop level of a run: (count, byte step, window-base step, pipe-index step)
Dim = tuple[int, int, int, int]


def _indices(n: int, lo0: int, d: int, size: int, lo: int, hi: int) -> range:
    """The ``i < n`` whose bytes ``[lo0 + i d, lo0 + i d + size)`` overlap ``[lo, hi)``, in order."""
    if d == 0:
        return range(n) if lo0 < hi and lo0 + size > lo else range(0)
    if d > 0:  # lo0 + i d < hi and lo0 + i d + size > lo
        first = max(0, (lo - size - lo0) // d + 1)
        last = min(n - 1, -((lo0 - hi) // d) - 1)
    else:
        e = -d  # lo0 - i e < hi and lo0 - i e + size > lo
        first = max(0, (lo0 - hi) // e + 1)
        last = min(n - 1, -((lo - size - lo0) // e) - 1)
    return range(first, last + 1)


class AccessRun:
    """Settled accesses of one line on one core in (nested) arithmetic progression (module doc).

    ``first`` is the first member's :class:`~pyptoemu.check.races.Access`; a member is rebuilt as a
    copy of it with its own ``pidx`` (its ``iseq``, ``start`` and ``seq`` stay the first member's:
    the issue number only names the block, the same for every member, and of the start order only
    the order against later accesses matters, and every member precedes those)."""

    __slots__ = ("core", "dims", "first", "fp0", "lo0", "size")

    def __init__(self, first, lo: int, hi: int, fp: tuple | None) -> None:
        self.first, self.core = first, first.core
        self.lo0, self.size, self.fp0 = lo, hi - lo, fp
        self.dims: list[list] = [[1, 0, 0, 0]]

    @staticmethod
    def key(y, lo: int, hi: int, fp: tuple | None) -> tuple:
        """What every member of one run shares (the block too: a member reports the first's)."""
        return (id(y.core), y.core.block_of(y), y.loc, y.name, y.pipe_i, y.atomic, hi - lo,
                None if fp is None else fp[1:])

    def _step(self, y, lo: int, fp: tuple | None) -> tuple[int, int, int]:
        return lo - self.lo0, 0 if fp is None else fp[0] - self.fp0[0], y.pidx - self.first.pidx

    def extend(self, y, lo: int, hi: int, fp: tuple | None) -> bool:
        """Append the access ``y`` (bytes ``[lo, hi)``, window ``fp``) to a one-level run if it
        continues the progression."""
        if len(self.dims) != 1:
            return False
        dim = self.dims[0]
        step = self._step(y, lo, fp)
        if dim[0] == 1:
            if step[2] <= 0:
                return False
            dim[1:] = step
        elif step != tuple(dim[0] * s for s in dim[1:]):
            return False
        dim[0] += 1
        return True

    def absorb(self, other: AccessRun) -> bool:
        """Append the closed run ``other`` as the next iteration of this run's outermost level, if
        it has the shape of one (the levels below) and sits one outer step further."""
        inner = self.dims[1:]
        if other.dims != inner:
            return False
        outer = self.dims[0]
        step = other._offset_from(self)
        if outer[0] == 1:
            if step[2] <= 0:
                return False
            outer[1:] = step
        elif step != tuple(outer[0] * s for s in outer[1:]):
            return False
        outer[0] += 1
        return True

    def _offset_from(self, base: AccessRun) -> tuple[int, int, int]:
        return base._step(self.first, self.lo0, self.fp0)

    def promoted(self) -> AccessRun:
        """This run as the first iteration of one more (outer) loop level."""
        self.dims.insert(0, [1, 0, 0, 0])
        return self

    @property
    def n(self) -> int:
        out = 1
        for dim in self.dims:
            out *= dim[0]
        return out

    @property
    def last_pidx(self) -> int:
        return self.first.pidx + sum((n - 1) * dp for n, _, _, dp in self.dims)

    def hull(self) -> tuple[int, int]:
        """The bytes every member lies in."""
        lo = self.lo0 + sum(min(0, (n - 1) * d) for n, d, *_ in self.dims)
        hi = self.lo0 + sum(max(0, (n - 1) * d) for n, d, *_ in self.dims) + self.size
        return lo, hi

    def members(self, lo: int, hi: int, fp: tuple | None, known: int):
        """``(member, lo, hi)`` of each member overlapping the access ``[lo, hi)`` (window ``fp``)
        whose pipe index is not below ``known`` (those the accessing core does not know complete),
        in the order they were made."""
        f = self.first
        dims = self.dims
        # per level: the hull of one iteration (offset of its lowest byte, its byte length) and the
        # largest pipe-index offset inside it
        below = []
        rel, span, top = 0, self.size, 0
        for n, d, _, dp in reversed(dims):
            below.append((rel, span, top))
            rel += min(0, (n - 1) * d)
            span += abs((n - 1) * d)
            top += (n - 1) * dp
        below.reverse()

        def walk(k: int, mlo: int, base: int, pidx: int):
            n, d, db, dp = dims[k]
            rel, span, top = below[k]
            for i in _indices(n, mlo + rel, d, span, lo, hi):
                p = pidx + i * dp
                if p + top < known:
                    continue
                if k + 1 < len(dims):
                    yield from walk(k + 1, mlo + i * d, base + i * db, p)
                    continue
                m_lo = mlo + i * d
                mfp = None if self.fp0 is None else (base + i * db, *self.fp0[1:])
                if footprints_overlap(fp, mfp):
                    yield f.member(p), m_lo, m_lo + self.size

        yield from walk(0, self.lo0, 0 if self.fp0 is None else self.fp0[0], f.pidx)


__all__ = ["AccessRun"]
