"""The written bytes of an on-chip buffer as merged byte ranges (pyptoemu.core.byteranges): the
uninitialised-read check answers exactly as a per-byte mask would."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from pyptoemu.core.byteranges import ByteRanges

SIZE = 300
spans = st.tuples(st.integers(0, SIZE), st.integers(0, 64)).map(lambda t: (t[0], min(SIZE, t[0] + t[1])))


@settings(max_examples=300)
@given(writes=st.lists(spans, max_size=25), reads=st.lists(spans, min_size=1, max_size=25))
def test_covered_ranges_answer_as_a_byte_mask(writes, reads):
    ranges, mask = ByteRanges(), np.zeros(SIZE, dtype=bool)
    for lo, hi in writes:
        ranges.add(lo, hi)
        mask[lo:hi] = True
        starts, ends = ranges.starts, ranges.ends
        # disjoint, in order, never touching (touching ranges join), each non-empty
        assert all(s < e for s, e in zip(starts, ends, strict=True))
        assert all(e < s for e, s in zip(ends, starts[1:], strict=False))
    for lo, hi in reads:
        assert ranges.covers(lo, hi) == bool(mask[lo:hi].all()), (writes, lo, hi)
    assert sum(e - s for s, e in zip(ranges.starts, ranges.ends, strict=True)) == int(mask.sum())


def test_adjacent_tile_writes_join_into_one_range():
    ranges = ByteRanges()
    for k in (2, 0, 1, 3):  # four 4 KiB tiles written out of order
        ranges.add(4096 * k, 4096 * (k + 1))
    assert (ranges.starts, ranges.ends) == ([0], [4 * 4096])
    assert ranges.covers(100, 4 * 4096) and not ranges.covers(100, 4 * 4096 + 1)
