"""A pipe's recent instructions are trimmed once per batch, not once per instruction: the path sees
the same thing either way. Fed one instruction per batch (a trim after each, what the per-instruction
trim did), every instruction gets the same path, every pipe keeps the same recent instructions at the
end, and the run the same bound, on one core, on four, and with full barriers whose drain is searched."""

from __future__ import annotations

from pathlib import Path

import pytest

import pyptoemu
from pyptoemu.trace import bottleneck

ROOT = Path(__file__).resolve().parents[3]
KERNELS = [
    (ROOT / "examples" / "double_buffer_1024.pto", {}, 1),
    (ROOT / "examples" / "vadd_spmd.pto", {"arg3": 16 * 4 * 4}, 4),
    (ROOT / "tests" / "e2e" / "user_kernels" / "kernels" / "k47_c2v_loop_pop_free.pto", {"arg3": 3}, 1),
]


def _run(path: Path, args: dict, blocks: int) -> tuple[str, list, list]:
    r = pyptoemu.run(str(path), args=args, blocks=blocks, data=False, races="off", keep_log=True)
    waits_of = r.chip.recorder.consumers[0].waits_of  # the waits a path crossed, by kind
    rows = []
    for core in r.chip.cores:
        for ins in sorted(core.trace_log, key=lambda i: (i.start, i.seq)):
            p = ins.path
            if type(p) is tuple:  # a pipe path (bottleneck.WAITS): as a list, up to its start
                p = bottleneck._until(ins, ins.start)
            elif type(p) is not list:  # a stall or a full barrier whose path was not asked for
                p = bottleneck._until(ins, ins.end)
            rows.append((ins.start, ins.seq, tuple(p[:bottleneck.WAITS]), sorted(waits_of(p).items())))
    neck = r.chip.recorder.consumers[0]
    recent = [[n.seq for n in t.recent] for s in neck.cores.values() for t in s.pipes.values()]
    return r.bound, rows, recent


@pytest.mark.parametrize(("path", "args", "blocks"), KERNELS, ids=[k[0].stem for k in KERNELS])
def test_a_trim_per_batch_is_a_trim_per_instruction(monkeypatch, path, args, blocks):
    bound, rows, recent = _run(path, args, blocks)
    consume_batch = bottleneck.CriticalPath.consume_batch

    def one_by_one(self, batch):
        for ins in batch:
            consume_batch(self, (ins,))

    monkeypatch.setattr(bottleneck.CriticalPath, "consume_batch", one_by_one)
    bound_each, rows_each, recent_each = _run(path, args, blocks)
    assert len(rows) > 100 and any(r[2] != rows[0][2] for r in rows)  # paths that grow
    assert bound == bound_each
    assert rows == rows_each
    assert recent == recent_each and sum(map(len, recent)) >= len(recent)
