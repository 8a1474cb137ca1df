"""The critical path's usual case (the pipe's previous instruction released it, taken from
``_PipeTrack.last`` without the search of its recent instructions) is the general lookup, only faster: with the
shortcut disabled, every recorded instruction gets the same path and the run the same bound."""

from __future__ import annotations

from pathlib import Path

import pytest

import pyptoemu
from pyptoemu.trace import bottleneck

ROOT = Path(__file__).resolve().parents[3]
KERNELS = [
    (ROOT / "examples" / "double_buffer_1024.pto", {}, 1),  # one core, pipes chained by flags
    (ROOT / "examples" / "vadd_spmd.pto", {"arg3": 16 * 4 * 4}, 4),  # four cores
    # cube and vector cores handing tiles over a FIFO (full barriers whose drain is searched)
    (ROOT / "tests" / "e2e" / "user_kernels" / "kernels" / "k47_c2v_loop_pop_free.pto", {"arg3": 3}, 1),
]


class _IndexOnly(bottleneck._PipeTrack):
    """A track whose last instruction is never known: every lookup searches the recent instructions."""

    last = property(lambda self: None, lambda self, value: None)


def _paths(path: Path, args: dict, blocks: int) -> tuple[str, list]:
    r = pyptoemu.run(str(path), args=args, blocks=blocks, data=False, races="off", keep_log=True)
    waits_of = r.chip.recorder.consumers[0].waits_of  # the waits a path crossed, by kind
    rows = []
    for core in r.chip.cores:
        for ins in sorted(core.trace_log, key=lambda i: (i.start, i.seq)):
            p = ins.path
            if type(p) is tuple:  # a pipe path (bottleneck.WAITS): as a list, up to its start
                p = bottleneck._until(ins, ins.start)
            elif type(p) is not list:  # a full barrier whose drain was not needed yet
                p = bottleneck._until(ins, ins.end)
            rows.append((ins.start, ins.pipe, ins.name, tuple(p[:bottleneck.WAITS]),
                         sorted(waits_of(p).items())))
    return r.bound, rows


@pytest.mark.parametrize(("path", "args", "blocks"), KERNELS, ids=[k[0].stem for k in KERNELS])
def test_the_shortcut_gives_what_the_index_gives(monkeypatch, path, args, blocks):
    bound, rows = _paths(path, args, blocks)
    monkeypatch.setattr(bottleneck, "_PipeTrack", _IndexOnly)
    bound_general, rows_general = _paths(path, args, blocks)
    assert len(rows) > 100 and any(r[3] != rows[0][3] for r in rows)  # paths that grow
    assert bound == bound_general
    assert rows == rows_general
