"""The bytes of an on-chip buffer that something has written: a set of byte ranges.

The uninitialised-read check asks whether every byte an instruction reads was written before. A
per-byte mask answers that, but costs a byte per byte of every buffer a core touches, on each of
a chip's 72 cores; tiles are written whole or in a few row ranges, so the written bytes are a few
ranges, kept sorted and merged (touching ranges join), and a question is two binary searches.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right


class ByteRanges:
    """Disjoint, non-touching half-open ranges ``[starts[i], ends[i])`` in increasing order."""

    __slots__ = ("ends", "starts")

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []

    def add(self, lo: int, hi: int) -> None:
        """Mark ``[lo, hi)``, joining every range it overlaps or touches."""
        if lo >= hi:
            return
        starts, ends = self.starts, self.ends
        i = bisect_left(ends, lo)  # the first range that ends at or after lo
        j = bisect_right(starts, hi)  # the ranges before j start at or before hi
        if i < j:
            lo = min(lo, starts[i])
            hi = max(hi, ends[j - 1])
        starts[i:j] = [lo]
        ends[i:j] = [hi]

    def covers(self, lo: int, hi: int) -> bool:
        """Whether every byte of ``[lo, hi)`` is marked (an empty range is)."""
        if lo >= hi:
            return True
        i = bisect_right(self.starts, lo) - 1
        return i >= 0 and self.ends[i] >= hi

    def __len__(self) -> int:
        return len(self.starts)


__all__ = ["ByteRanges"]
