"""The waits a critical path crossed, kept as four slots per kind of wait in the path list
(``CriticalPath.wait_slot``, ``bottleneck._cross``), read back (``CriticalPath.waits_of``) as the
straightforward formulation keeps them: a dict per path, copied at each crossing, kind -> (blocked
cycles, latest blocked cycle, first line, last line). Paths fork (a crossing copies any earlier path)
and kinds of wait first crossed late meet paths made before they were known (shorter lists)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pyptoemu.trace import bottleneck

KINDS = [("MTE2", "V"), ("V", "MTE3"), ("MTE3", "MTE2"), ("x", "tpop"), ("V", "MTE2")]


def _crossed(waits: dict, kind: tuple, lo: int, hi: int, line: int) -> dict:
    """The dict formulation: ``waits`` having crossed a wait blocked over [lo, hi) at ``line``."""
    waits = dict(waits)
    total, last, first_line, last_line = waits.get(kind, (0, 0, 0, 0))
    lo = max(lo, last)
    if hi > lo:
        total += hi - lo
    if line:
        first_line = line if not first_line else min(first_line, line)
        last_line = max(last_line, line)
    waits[kind] = (total, max(hi, last), first_line, last_line)
    return waits


# each crossing: which earlier path it continues, the kind, the wait's start, how long it was blocked
# (a cycle at least, as on every path: a wait crossed started before it ended), its line (0: none)
CROSSINGS = st.lists(st.tuples(st.integers(0, 10**6), st.sampled_from(KINDS), st.integers(0, 200),
                               st.integers(1, 50), st.integers(0, 6)), max_size=40)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(CROSSINGS, st.booleans())
def test_wait_slots_read_back_as_the_dict_of_each_path(crossings, flag_keys):
    neck = bottleneck.CriticalPath()
    paths = [bottleneck.EMPTY]
    dicts: list[dict] = [{}]
    for k, (pick, kind, lo, blocked, line) in enumerate(crossings):
        j = pick % len(paths)
        # a flag wait is looked up by its own flag (src, dst, id), a cross-core one by its kind
        key = (*kind, k % 3) if flag_keys and kind[0] != "x" else kind
        paths.append(bottleneck._waited(paths[j], neck.wait_slot(key), lo, lo + blocked, line))
        dicts.append(_crossed(dicts[j], kind, lo, lo + blocked, line))
    for path, waits in zip(paths, dicts, strict=True):
        assert neck.waits_of(path) == {kind: list(w) for kind, w in waits.items()}
    assert paths[0] == bottleneck.EMPTY == [0] * bottleneck.WAITS  # crossings copy: no path changes
