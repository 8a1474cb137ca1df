"""The critical path keeps what is in flight per core, not a fixed window (issue 7 item 8: memory
follows the work, not the core count): each core's recent instructions per pipe and its recent
scalar sync points stay a few entries, however many instructions the core ran and however many cores
ran; a pipe's finished results are not kept either."""

from __future__ import annotations

from pathlib import Path

import pyptoemu
from pyptoemu.trace import bottleneck

VADD = Path(__file__).resolve().parents[3] / "examples" / "vadd_spmd.pto"


def _held(monkeypatch, blocks: int, tiles: int) -> tuple[list, object]:
    held = {}
    result = bottleneck.CriticalPath.result

    def keep(self, makespan, *rest):
        held["cp"] = self
        return result(self, makespan, *rest)

    monkeypatch.setattr(bottleneck.CriticalPath, "result", keep)
    rows = 16 * tiles * blocks
    res = pyptoemu.run(VADD, args={"arg3": rows}, blocks=blocks, data=False)
    sizes = [(sum(len(t.recent) for t in s.pipes.values()), len(s.s_syncs)) for s in held["cp"].cores.values()]
    return sizes, res


def test_each_core_keeps_a_few_release_times_and_sync_points(monkeypatch):
    """8 cores x 80 tiles (~1100 instructions each): before, each core kept up to 256 release times
    per pipe and 64 sync points (532 and 64 here)."""
    short, _ = _held(monkeypatch, 8, 20)
    sizes, res = _held(monkeypatch, 8, 80)
    assert len(sizes) == 8 and res.chip.recorder.seq > 8000
    assert max(n for n, _ in sizes) <= 32 and max(s for _, s in sizes) <= 4, sizes
    assert max(sizes) <= max(short), (short, sizes)  # flat in run length


def test_a_pipe_keeps_no_results_it_has_applied():
    rows = 16 * 4 * 4
    res = pyptoemu.run(VADD, args={"arg3": rows}, blocks=4)
    pending = [e for c in res.chip.cores for p in c.pipes.values() for e in p.own_pending]
    assert pending and all(e[2] is None and e[3] is None for e in pending)
