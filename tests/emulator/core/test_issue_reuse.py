"""A tile op issued again on the very operand values reuses its last issue's snapshots, timing and
byte ranges (TileOpBinding.issue): only while nothing they were taken from changed. A tile's valid
shape set between two issues, and a scalar that is equal but not the same (-0.0 after 0.0), make
a new snapshot."""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path

import numpy as np
import pytest

import pyptoemu
from pyptoemu.core.tileop import VIEW, OperandSnap, TileOpBinding
from tests.emulator.core.kernels import binary_kernel, pview, vec

DYN = vec(16, 64, vr="?", vc="?")
EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def test_a_valid_shape_set_between_issues_is_seen_by_the_next_issue():
    """The same tmuls on the same tile, its valid rows set to 4, 8, 4, 8 before each issue."""
    body = f"""    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %cst = arith.constant 2.0 : f32
    %t = pto.alloc_tile valid_row = %cr valid_col = %cc : {DYN}
    scf.for %i = %c0 to %c4 step %c1 {{
      %odd = arith.remui %i, %c2 : index
      %k = arith.addi %odd, %c1 : index
      %vr = arith.muli %k, %c4 : index
      pto.set_validshape %t, %vr, %cc : {DYN}
      pto.tmuls ins(%t, %cst : {DYN}, f32) outs(%t : {DYN})
      pto.barrier <PIPE_V>
    }}"""
    res = pyptoemu.run(binary_kernel(body, nargs=1), data=False, keep_log=True)
    muls = [i for i in res.core.trace_log if i.name == "tmuls"]
    assert [i.operands[0].vrow for i in muls] == [4, 8, 4, 8]
    occupancy = [i.end - i.start for i in muls]
    assert occupancy[0] == occupancy[2] < occupancy[1] == occupancy[3]  # twice the rows, more repeats


def test_a_scalar_equal_to_the_last_but_not_the_same_is_snapshotted_anew():
    """x * s for s = 0.0, -0.0, 0.0, -0.0 (a loop-carried scalar negated each time): 0.0 == -0.0,
    but the product's sign follows the scalar."""
    row = vec(1, 64)
    body = f"""    %c4 = arith.constant 4 : index
    %zero = arith.constant 0.0 : f32
    %x = pto.alloc_tile : {row}
    %u = pto.alloc_tile : {row}
    %in = pto.partition_view %v0, offsets = [%c0, %c0], sizes = [%c1, %cc] : !pto.tensor_view<?x?xf32> -> {pview(1, 64)}
    pto.tload ins(%in : {pview(1, 64)}) outs(%x : {row})
    pto.barrier <PIPE_ALL>
    %last = scf.for %i = %c0 to %c4 step %c1 iter_args(%s = %zero) -> (f32) {{
      pto.tmuls ins(%x, %s : {row}, f32) outs(%u : {row})
      pto.barrier <PIPE_ALL>
      %out = pto.partition_view %v1, offsets = [%i, %c0], sizes = [%c1, %cc] : !pto.tensor_view<?x?xf32> -> {pview(1, 64)}
      pto.tstore ins(%u : {row}) outs(%out : {pview(1, 64)})
      pto.barrier <PIPE_ALL>
      %next = arith.negf %s : f32
      scf.yield %next : f32
    }}"""
    x = np.ones((4, 64), np.float32)
    res = pyptoemu.run(binary_kernel(body, rows=4, nargs=2), inputs={"arg0": x, "arg1": np.full((4, 64), 7, np.float32)})
    out = res.outputs["arg1"].reshape(4, 64)
    assert np.all(out == 0.0)
    assert np.signbit(out).all(axis=1).tolist() == [False, True, False, True]


@pytest.mark.parametrize("data", [True, False], ids=["data", "timing-only"])
def test_reads_known_written_on_one_core_are_looked_up_anew_on_another(data):
    """Block 0 loads %t, then both blocks read it in the same op (block 1 later, after a long
    load of its own): its reads are known written on block 0's core, which never makes them known
    on block 1's, where nothing wrote %t."""
    tile = vec(16, 64)
    body = f"""    %t = pto.alloc_tile : {tile}
    %u = pto.alloc_tile : {tile}
    %w = pto.alloc_tile : {vec(64, 64)}
    %blk = pto.get_block_idx
    %b = arith.index_cast %blk : i64 to index
    %first = arith.cmpi eq, %b, %c0 : index
    %cst = arith.constant 2.0 : f32
    %c64 = arith.constant 64 : index
    %vw = pto.make_tensor_view %arg1, shape = [%c64, %c64], strides = [%c64, %c1] : !pto.tensor_view<?x?xf32>
    %pw = pto.partition_view %vw, offsets = [%c0, %c0], sizes = [%c64, %c64] : !pto.tensor_view<?x?xf32> -> {pview(64, 64)}
    scf.if %first {{
      pto.tload ins(%p0 : {pview(16, 64)}) outs(%t : {tile})
    }} else {{
      pto.tload ins(%pw : {pview(64, 64)}) outs(%w : {vec(64, 64)})
      pto.tload ins(%pw : {pview(64, 64)}) outs(%w : {vec(64, 64)})
    }}
    pto.barrier <PIPE_ALL>
    scf.for %i = %c0 to %c1 step %c1 {{
      pto.tmuls ins(%t, %cst : {tile}, f32) outs(%u : {tile})
    }}"""
    res = pyptoemu.run(binary_kernel(body, nargs=2), blocks=2, data=data, races="warn",
                       inputs={"arg0": np.ones((16, 64), np.float32), "arg1": np.ones((64, 64), np.float32)}
                       if data else None)
    uninit = [f for f in res.findings if f.kind == "uninitialised-read"]
    assert len(uninit) == 1 and "tmuls" in str(uninit[0]), [str(f) for f in res.findings]


def _fields(s: OperandSnap) -> list:
    """Every field of a snapshot, ``arg`` too (which ``==`` does not compare)."""
    return [getattr(s, f.name) for f in dataclasses.fields(OperandSnap)]


def _checked_moved(monkeypatch) -> list:
    """Make every answer of TileOpBinding._moved (the last issue, its GM windows moved) be checked
    against what _snapshot, from nothing reused, makes of the same operands; the answers seen."""
    original = TileOpBinding._moved
    answers: list = []

    def checked(self, values):
        template = original(self, values)
        if template is not None:
            got = self.last_result
            fresh = copy.copy(self)
            fresh.last_parts, fresh.last_result, fresh.view_shape = None, (), None
            fresh._snapshot(values)
            want = fresh.last_result
            assert got[0] == want[0]  # the snapshots (objects by identity)
            assert [_fields(s) for s in got[0]] == [_fields(s) for s in want[0]]  # arg too (== leaves it out)
            assert got[1:] == want[1:]  # timing key, timing, reads, writes
            assert template == fresh.template  # what the Instr is made of, its transfer and shape key
            answers.append(got)
        return template

    monkeypatch.setattr(TileOpBinding, "_moved", checked)
    return answers


def _rows_in_fours(tile: str, view: str, stored: str, allocs: str = "") -> str:
    """A kernel body: out[4i:4i+4] = in[4i:4i+4] + 1 for i = 0..3 through the tile %t, storing
    ``stored`` (``allocs`` makes any other tile), each op behind a full barrier."""
    return f"""    %c4 = arith.constant 4 : index
    %c16 = arith.constant 16 : index
    %cst = arith.constant 1.0 : f32
    %t = pto.alloc_tile : {tile}
{allocs}    scf.for %r = %c0 to %c16 step %c4 {{
      %in = pto.partition_view %v0, offsets = [%r, %c0], sizes = [%c4, %cc] : !pto.tensor_view<?x?xf32> -> {view}
      %out = pto.partition_view %v1, offsets = [%r, %c0], sizes = [%c4, %cc] : !pto.tensor_view<?x?xf32> -> {view}
      pto.tload ins(%in : {view}) outs(%t : {tile})
      pto.barrier <PIPE_ALL>
      pto.tadds ins(%t, %cst : {tile}, f32) outs(%t : {tile})
      pto.barrier <PIPE_ALL>
      pto.tstore ins({stored} : {tile}) outs(%out : {view})
      pto.barrier <PIPE_ALL>
    }}"""


@pytest.mark.parametrize("data", [True, False], ids=["data", "timing-only"])
def test_loads_and_stores_of_windows_moved_along_a_tensor_are_issued_as_anew(monkeypatch, data):
    """out[4i:4i+4] = in[4i:4i+4] + 1 for i = 0..3: the moved windows' snapshots, timing and byte
    ranges are those a new snapshot gives, and the results are right."""
    tile, view = vec(4, 64), pview(4, 64)
    body = _rows_in_fours(tile, view, "%t")
    answers = _checked_moved(monkeypatch)
    x = np.arange(16 * 64, dtype=np.float32).reshape(16, 64)
    res = pyptoemu.run(binary_kernel(body, nargs=2), inputs={"arg0": x} if data else None, data=data, keep_log=True)
    assert len(answers) == 6  # the load and the store of rows 4, 8 and 12
    loads = [i for i in res.core.trace_log if i.name == "tload"]
    assert [i.reads[0][1:3] for i in loads] == [(r * 256, (r + 4) * 256) for r in (0, 4, 8, 12)]
    assert len({(i.start - i.issue, i.end - i.start) for i in loads[1:]}) == 1  # timed alike
    if data:
        assert np.array_equal(res.outputs["arg1"].reshape(16, 64), x + 1)


def test_the_double_buffered_stream_moves_its_windows_without_new_snapshots(monkeypatch):
    """examples/double_buffer_1024.pto, timing only: every load and store after the first of each
    op is its last issue with the window moved (checked equal to a new snapshot)."""
    answers = _checked_moved(monkeypatch)
    pyptoemu.run(EXAMPLES / "double_buffer_1024.pto", data=False)
    assert len(answers) == 4 * 127  # 2 loads and 2 stores in each of 128 iterations, all but the first


def test_a_moved_window_snapshot_is_the_one_the_constructor_makes(monkeypatch):
    """_moved fills in every field of a moved window's OperandSnap (arg too, which == does not
    compare, left None though the last snapshot's was set) as OperandSnap(VIEW, view, ...) would."""
    answers = _checked_moved(monkeypatch)
    original = TileOpBinding._moved

    moved: list = []

    def with_args_set(self, values):  # the last snapshots as a run with data leaves them: an Arg each
        for snap in self.last_result[0] if self.last_result else ():
            snap.arg = object()
        template = original(self, values)
        if template is not None:
            moved.extend(s.arg for s in template[5] if s.kind == VIEW)
        return template

    monkeypatch.setattr(TileOpBinding, "_moved", with_args_set)
    pyptoemu.run(EXAMPLES / "double_buffer_1024.pto", data=False)
    assert len(answers) == len(moved) == 4 * 127 and moved == [None] * len(moved)


def _gm_only_notes(monkeypatch) -> list:
    """The calls of Memories.note_reads and Memories.writes_noted on ranges all in GM (each a GM
    window's span: it carries a footprint), made while a run goes on."""
    from pyptoemu.core.aicore import Memories

    seen: list = []
    note_reads, writes_noted = Memories.note_reads, Memories.writes_noted

    def reads(self, ranges, instr):
        if ranges and all(r[3] is not None for r in ranges):
            seen.append(("read", instr.name))
        return note_reads(self, ranges, instr)

    def writes(self, ranges):
        if ranges and all(r[3] is not None for r in ranges):
            seen.append(("write", ranges))
        return writes_noted(self, ranges)

    monkeypatch.setattr(Memories, "note_reads", reads)
    monkeypatch.setattr(Memories, "writes_noted", writes)
    return seen


def test_a_timing_only_start_notes_no_gm_window(monkeypatch):
    """examples/double_buffer_1024.pto, timing only: its loads read GM windows only and its stores
    write GM windows only; noting those would change nothing (Memories follows on-chip buffers), so
    no start asks (TileOpBinding.off_chip_reads / off_chip_writes): 512 calls fewer per run."""
    seen = _gm_only_notes(monkeypatch)
    res = pyptoemu.run(EXAMPLES / "double_buffer_1024.pto", data=False, races="off")
    assert res.cycles == 141671 and seen == []


@pytest.mark.parametrize("data", [True, False], ids=["data", "timing-only"])
def test_the_on_chip_side_of_a_window_moved_is_still_noted(data):
    """A store's tile is read on chip and a load's tile written there: whatever start skips for
    the GM side, the tile a loop stores before anything wrote it is reported, and the tile a load
    wrote is known written to the op that reads it next (no finding)."""
    tile, view = vec(4, 64), pview(4, 64)
    body = _rows_in_fours(tile, view, "%u", f"    %u = pto.alloc_tile addr = %c4096 : {tile}\n")
    res = pyptoemu.run(binary_kernel(body, nargs=2, extra_consts="    %c4096 = arith.constant 4096 : i64\n"),
                       data=data, races="warn",
                       inputs={"arg0": np.ones((16, 64), np.float32)} if data else None)
    uninit = [str(f) for f in res.findings if f.kind == "uninitialised-read"]
    assert uninit and all("tstore" in f for f in uninit), [str(f) for f in res.findings]
