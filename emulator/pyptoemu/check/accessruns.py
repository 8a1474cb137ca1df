"""Runs of settled GM accesses: what a loop on one core leaves for the other cores to race with.

A GM access of core C that C itself knows complete (every pipe of C that can still touch GM is
ordered after it) can still race with an access of another core D until D learns of it through a
hand-off; in a kernel whose cores never hand anything to each other (an SPMD split of the rows)
that is never, so the race detector has to keep it to the end of the run. A loop makes such
accesses in arithmetic progressions: iteration i of one source line reads or writes the window
``base0 + i * d_base`` (same sizes, strides and byte length), as instruction ``pidx0 + i * d_pidx``
of its pipe and ``iseq0 + i * d_iseq`` of its core. :class:`AccessRun` keeps such a progression as
its first member and the steps, so the live set of a long unsynchronised run holds one entry per
(core, line, progression) instead of one per iteration.

Every member can be rebuilt exactly (bytes, window, pipe index, issue number, so the block it
belongs to), so a run answers the race check member by member: a later access of another core
races with exactly the members the original entries would have raced with, counted alike. Only
settled accesses join a run, so a later access of the run's own core is ordered after every member.
"""

from __future__ import annotations

from pyptoemu.check.footprints import footprints_overlap


class AccessRun:
    """``n`` settled accesses of one line on one core, in arithmetic progression (see module doc).

    ``first`` is the first member's :class:`~pyptoemu.check.races.Access`; a member is rebuilt as a
    copy of it with its own ``pidx`` and ``iseq`` (its ``start``/``seq`` stay the first member's:
    only the order against later accesses matters, and every member precedes those)."""

    __slots__ = ("core", "d_base", "d_iseq", "d_lo", "d_pidx", "first", "fp0", "lo0", "n", "size")

    def __init__(self, first, lo: int, hi: int, fp: tuple | None) -> None:
        self.first, self.core = first, first.core
        self.lo0, self.size, self.fp0 = lo, hi - lo, fp
        self.n = 1
        self.d_lo = self.d_base = self.d_pidx = self.d_iseq = 0

    @staticmethod
    def key(y, lo: int, hi: int, fp: tuple | None) -> tuple:
        """What every member of one run shares."""
        return (id(y.core), y.loc, y.name, y.pipe_i, y.atomic, hi - lo, None if fp is None else fp[1:])

    def extend(self, y, lo: int, hi: int, fp: tuple | None) -> bool:
        """Append ``y`` (its bytes ``[lo, hi)``, window ``fp``) if it continues the progression."""
        f = self.first
        base = 0 if fp is None else fp[0] - self.fp0[0]
        if self.n == 1:
            d_pidx, d_iseq = y.pidx - f.pidx, y.iseq - f.iseq
            if d_pidx <= 0 or d_iseq <= 0:
                return False
            self.d_lo, self.d_base, self.d_pidx, self.d_iseq = lo - self.lo0, base, d_pidx, d_iseq
        else:
            n = self.n
            if (lo - self.lo0 != n * self.d_lo or base != n * self.d_base or y.pidx - f.pidx != n * self.d_pidx
                    or y.iseq - f.iseq != n * self.d_iseq):
                return False
        self.n += 1
        return True

    @property
    def last_pidx(self) -> int:
        return self.first.pidx + (self.n - 1) * self.d_pidx

    def hull(self) -> tuple[int, int]:
        """The bytes every member lies in."""
        a, b = self.lo0, self.lo0 + (self.n - 1) * self.d_lo
        return min(a, b), max(a, b) + self.size

    def _indices(self, lo: int, hi: int) -> range:
        """The members whose bytes overlap ``[lo, hi)``, in order."""
        d, lo0, size = self.d_lo, self.lo0, self.size
        if d == 0:
            return range(self.n) if lo0 < hi and lo0 + size > lo else range(0)
        if d > 0:  # lo0 + i d < hi and lo0 + i d + size > lo
            first = max(0, (lo - size - lo0) // d + 1)
            last = min(self.n - 1, -((lo0 - hi) // d) - 1)
        else:
            e = -d  # lo0 - i e < hi and lo0 - i e + size > lo
            first = max(0, (lo0 - hi) // e + 1)
            last = min(self.n - 1, -((lo - size - lo0) // e) - 1)
        return range(first, last + 1)

    def members(self, lo: int, hi: int, fp: tuple | None, known: int):
        """``(member, lo, hi)`` of each member overlapping the access ``[lo, hi)`` (window ``fp``)
        whose pipe index is not below ``known`` (those the accessing core does not know complete)."""
        f = self.first
        for i in self._indices(lo, hi):
            pidx = f.pidx + i * self.d_pidx
            if pidx < known:
                continue
            mlo = self.lo0 + i * self.d_lo
            mfp = None if self.fp0 is None else (self.fp0[0] + i * self.d_base, *self.fp0[1:])
            if not footprints_overlap(fp, mfp):
                continue
            yield f.member(pidx, f.iseq + i * self.d_iseq), mlo, mlo + self.size


__all__ = ["AccessRun"]
