"""The race detector follows the run and forgets what every pipe knows complete: a long run keeps
a short live set, and a race between the first and the last access of a long run is still found."""

from __future__ import annotations

import pyptoemu
from pyptoemu.check.races import PRUNE_EVERY
from tests.emulator.core.kernels import copy_loop

N = PRUNE_EVERY // 2 + 200  # two accesses per iteration: past one pass that drops what is known


def test_a_race_across_a_long_run_is_found_after_the_live_set_was_pruned():
    res = pyptoemu.run(copy_loop(N, late_race=True), races="warn", sync="asis", data=False)
    races = [f for f in res.findings if f.kind == "race"]
    assert len(races) == 1, [str(f) for f in res.findings]
    d = races[0].detail
    assert d["kind"] == "RAW" and d["buffer"] == "UB" and d["bytes"] == [4096, 8192]
    assert (d["first"]["op"], d["first"]["pipe"]) == ("texpands", "V")
    assert (d["second"]["op"], d["second"]["pipe"]) == ("tstore", "MTE3")
    # the same-window stores of the last copy and the final store are ordered (in-order MTE3): no WAW


def test_the_live_set_stays_short_over_a_long_run(monkeypatch):
    """Every window the loop reads stays in the live set until every memory pipe knows it complete:
    with the clocks passing them, at most a pruning interval's worth is held at any time."""
    from pyptoemu.check import races

    seen: list[int] = []
    forget = races.RaceDetector.forget_known

    def watch(self):
        forget(self)
        seen.append(sum(len(e.rows) for pair in self.live.values() for e in pair))

    monkeypatch.setattr(races.RaceDetector, "forget_known", watch)
    res = pyptoemu.run(copy_loop(2 * N, late_race=False), races="error", sync="asis", data=False)
    assert res.findings == []
    assert len(seen) >= 2 and max(seen) < 50, seen
