"""GM accesses on a chip: the race detector drops what every core knows complete and folds what only
other cores can still race with into runs (pyptoemu.check.accessruns). The live set of a long SPMD
run stays short, and every race is found with the same count and wording as by a detector that
never forgets anything (the oracle: pruning switched off)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pyptoemu
from pyptoemu.check import races
from pyptoemu.check.accessruns import AccessRun
from tests.emulator.chip.kernels import c2v_loop


def spmd_add(blocks: int, tiles: int, overlap: int, chunks: int = 1) -> str:
    """z = x + y by 16-row tiles, block b over rows [b * 16 tiles, ...) plus ``overlap`` tiles of
    the next block's rows (0: disjoint windows, no race). ``chunks`` > 1: the rows of a block in
    ``chunks`` pieces, an outer loop around the tile loop (a nested loop)."""
    assert (tiles + overlap) % chunks == 0, "whole tiles per piece"
    per = 16 * tiles
    rows = per * blocks + 16 * overlap
    tile = "!pto.tile_buf<vec, 16x64xf32>"
    pv = "!pto.partition_tensor_view<16x64xf32>"
    views = "\n".join(
        f"    %v{n} = pto.make_tensor_view %{n}, shape = [%rows, %c64], strides = [%c64, %c1] : "
        "!pto.tensor_view<?x?xf32>" for n in "xyz")
    parts = "\n".join(
        f"      %p{n} = pto.partition_view %v{n}, offsets = [%r, %c0], sizes = [%c16, %c64] : "
        f"!pto.tensor_view<?x?xf32> -> {pv}" for n in "xyz")
    return f"""module {{
  func.func @spmd_add(%x: !pto.ptr<f32>, %y: !pto.ptr<f32>, %z: !pto.ptr<f32>)
      attributes {{pto.entry, pto.kernel_kind = #pto.kernel_kind<vector>}} {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %c64 = arith.constant 64 : index
    %rows = arith.constant {rows} : index
    %per = arith.constant {per} : index
    %span = arith.constant {per + 16 * overlap} : index
    %bi64 = pto.get_block_idx
    %bi = arith.index_cast %bi64 : i64 to index
    %start = arith.muli %bi, %per : index
    %end = arith.addi %start, %span : index
{views}
    %tx = pto.alloc_tile : {tile}
    %ty = pto.alloc_tile : {tile}
    %tz = pto.alloc_tile : {tile}
    %piece = arith.constant {(per + 16 * overlap) // chunks} : index
    scf.for %p0 = %start to %end step %piece {{
    %p1 = arith.addi %p0, %piece : index
    scf.for %r = %p0 to %p1 step %c16 {{
{parts}
      pto.tload ins(%px : {pv}) outs(%tx : {tile})
      pto.tload ins(%py : {pv}) outs(%ty : {tile})
      pto.tadd ins(%tx, %ty : {tile}, {tile}) outs(%tz : {tile})
      pto.tstore ins(%tz : {tile}) outs(%pz : {pv})
    }}
    }}
    return
  }}
}}
"""


def spmd_add_by_cols(blocks: int, tiles: int) -> str:
    """z = x + y over 16 * tiles rows of 64 * blocks columns, block b on columns [64 b, 64 b + 64),
    starting at its own share of the rows and wrapping around: the windows of all blocks interleave
    in bytes (each spans whole rows of the matrix), and a block reaches rows another block did long
    before, yet no two windows of different blocks ever meet."""
    shift = 16 * (tiles // blocks)
    return spmd_add(1, tiles, 0).replace(
        "%rows = arith.constant", f"%width = arith.constant {64 * blocks} : index\n"
        f"    %shift = arith.constant {shift} : index\n    %rows = arith.constant").replace(
        "strides = [%c64, %c1]", "strides = [%width, %c1]").replace(
        "shape = [%rows, %c64]", "shape = [%rows, %width]").replace(
        "%start = arith.muli %bi, %per : index",
        "%start = arith.constant 0 : index\n    %c0b = arith.muli %bi, %c64 : index\n"
        "    %skip = arith.muli %bi, %shift : index").replace(
        "scf.for %r = %p0 to %p1 step %c16 {",
        "scf.for %r0 = %p0 to %p1 step %c16 {\n      %rs = arith.addi %r0, %skip : index\n"
        "      %r = arith.remui %rs, %rows : index").replace(
        "offsets = [%r, %c0]", "offsets = [%r, %c0b]")


def _findings(r) -> list:
    return [(str(f), f.count, f.detail) for f in r.findings]


def _unpruned(monkeypatch) -> None:
    """The oracle: a detector that keeps every access to the end."""
    def keep_all(self):
        self.since_prune = 0

    monkeypatch.setattr(races.RaceDetector, "forget_known", keep_all)


def _live_rows(monkeypatch) -> list[int]:
    seen: list[int] = []
    forget = races.RaceDetector.forget_known

    def watch(self):
        forget(self)
        seen.append(sum(len(e.rows) for pair in self.live.values() for e in pair))

    monkeypatch.setattr(races.RaceDetector, "forget_known", watch)
    return seen


def test_an_spmd_run_keeps_a_live_set_that_does_not_grow_with_its_length(monkeypatch):
    """8 blocks that never hand anything to each other: their GM accesses stay racy for the other
    cores to the end, yet the live set holds a run per core and line, not an entry per iteration."""
    seen = _live_rows(monkeypatch)
    short = pyptoemu.run(spmd_add(8, 60, 0), blocks=8, data=False)
    short_max = max(seen)
    seen.clear()
    long = pyptoemu.run(spmd_add(8, 240, 0), blocks=8, data=False)
    assert short.findings == [] and long.findings == []
    assert long.chip.recorder.seq > 3.5 * short.chip.recorder.seq
    assert len(seen) >= 5 and max(seen) <= short_max + 8, (short_max, seen)
    # unfolded, the z, x and y windows of 8 x 240 tiles would be 5760 entries
    assert max(seen) < 1000, seen


def test_a_nested_loop_keeps_a_live_set_that_does_not_grow_with_its_outer_loop(monkeypatch):
    """The tile loop inside a loop over pieces: runs of runs, so 4x the pieces keep no more."""
    seen = _live_rows(monkeypatch)
    short = pyptoemu.run(spmd_add(2, 480, 0, chunks=48), blocks=2, data=False)
    short_max = max(seen)
    seen.clear()
    long = pyptoemu.run(spmd_add(2, 1920, 0, chunks=192), blocks=2, data=False)
    assert short.findings == [] and long.findings == []
    assert len(seen) >= 10 and max(seen) <= short_max + 8, (short_max, seen)


def test_runs_of_column_blocks_are_not_searched_by_the_other_cores(monkeypatch):
    """Each block's windows interleave with every other block's in bytes: a run keeps the grid box
    of its members, so another core's access is not compared member by member with it."""
    searched: list[int] = []
    members = AccessRun.members

    def count(self, *a):
        searched.append(1)
        return members(self, *a)

    monkeypatch.setattr(AccessRun, "members", count)
    res = pyptoemu.run(spmd_add_by_cols(4, 200), blocks=4, data=False)
    assert res.findings == [] and res.chip.recorder.seq > 4 * 200 * 4
    assert searched == []


@pytest.mark.parametrize("overlap, chunks", [(1, 1), (3, 1), (4, 4)])
def test_races_between_blocks_after_folding_match_a_detector_that_forgets_nothing(monkeypatch, overlap, chunks):
    """Block b also works on the first ``overlap`` tiles of block b+1, long after block b+1 did
    (its accesses there are folded by then): same races, counts and wording as the oracle."""
    text = spmd_add(4, 120, overlap, chunks)
    pruned = pyptoemu.run(text, blocks=4, data=False, races="warn")
    got = _findings(pruned)
    _unpruned(monkeypatch)
    want = _findings(pyptoemu.run(text, blocks=4, data=False, races="warn"))
    assert got == want
    kinds = sorted(f[2]["kind"] for f in got)
    assert kinds == ["WAW"], got  # z stored twice; x and y are only read
    waw = next(f for f in pruned.findings if f.detail["kind"] == "WAW")
    assert waw.count == 3 * overlap  # blocks 0-1, 1-2 and 2-3 store `overlap` tiles both


@settings(max_examples=6, deadline=None)
@given(blocks=st.integers(2, 6), tiles=st.integers(20, 40), split=st.sampled_from([1, 2]))
def test_c2v_blocks_storing_one_window_race_alike_with_and_without_pruning(blocks, tiles, split):
    """Cube and vector cores of each block learn of each other through the FIFO (accesses are
    dropped once all know them); blocks storing the same window race: found alike either way."""
    text = c2v_loop(tiles, 16, split, shared_out=True)
    run = {"args": {"arg2": 32 * tiles * blocks}, "blocks": blocks, "data": False, "races": "warn"}
    got = _findings(pyptoemu.run(text, **run))
    with pytest.MonkeyPatch.context() as mp:
        _unpruned(mp)
        want = _findings(pyptoemu.run(text, **run))
    assert got == want and got


@settings(max_examples=100, deadline=None)
@given(lo0=st.integers(0, 4096), d=st.integers(-256, 256), dd=st.integers(-4096, 4096), size=st.integers(1, 512),
       n=st.integers(1, 6), m=st.integers(2, 6), qlo=st.integers(-1024, 30000), qlen=st.integers(1, 4096),
       known=st.integers(0, 300))
def test_a_run_of_runs_yields_the_members_of_its_runs_in_order(lo0, d, dd, size, n, m, qlo, qlen, known):
    f = _first()

    def inner(j: int) -> AccessRun:
        base = SimpleNamespace(core=f.core, pidx=f.pidx + 50 * j, iseq=f.iseq + 90 * j, pipe_i=0, atomic=False,
                               member=f.member)
        run = AccessRun(base, lo0 + j * dd, lo0 + j * dd + size, None)
        for i in range(1, n):
            member = SimpleNamespace(core=f.core, pidx=base.pidx + 3 * i, iseq=base.iseq + 7 * i)
            assert run.extend(member, lo0 + j * dd + i * d, lo0 + j * dd + i * d + size, None)
        return run

    outer = inner(0).promoted()
    for j in range(1, m):
        assert outer.absorb(inner(j))
    assert not outer.absorb(inner(m + 1))  # a skipped iteration is not the next one
    assert outer.n == n * m and outer.last_pidx == f.pidx + 50 * (m - 1) + 3 * (n - 1)
    qhi = qlo + qlen
    got = list(outer.members(qlo, qhi, None, known))
    want = []
    for j in range(m):
        for i in range(n):
            mlo, pidx = lo0 + j * dd + i * d, f.pidx + 50 * j + 3 * i
            if mlo < qhi and mlo + size > qlo and pidx >= known:
                want.append((pidx, mlo, mlo + size))
    assert got == want
    los = [lo0 + j * dd + i * d for j in range(m) for i in range(n)]
    assert outer.hull() == (min(los), max(los) + size)


def _first(pidx: int = 5, iseq: int = 40):
    core = SimpleNamespace(label="AIV0")
    f = SimpleNamespace(core=core, pidx=pidx, iseq=iseq, pipe_i=0, atomic=False)
    f.member = lambda p: p
    return f


@settings(max_examples=200, deadline=None)
@given(lo0=st.integers(0, 4096), d=st.integers(-512, 512), size=st.integers(1, 1024), n=st.integers(2, 30),
       qlo=st.integers(-1024, 20000), qlen=st.integers(1, 4096), known=st.integers(0, 200))
def test_run_members_are_exactly_the_overlapping_entries_it_replaced(lo0, d, size, n, qlo, qlen, known):
    f = _first()
    run = AccessRun(f, lo0, lo0 + size, None)
    for i in range(1, n):
        member = SimpleNamespace(core=f.core, pidx=f.pidx + 3 * i, iseq=f.iseq + 7 * i)
        assert run.extend(member, lo0 + i * d, lo0 + i * d + size, None)
    assert not run.extend(SimpleNamespace(core=f.core, pidx=f.pidx + 3 * n + 1, iseq=f.iseq + 7 * n),
                          lo0 + n * d, lo0 + n * d + size, None)
    qhi = qlo + qlen
    got = list(run.members(qlo, qhi, None, known))
    want = [(f.pidx + 3 * i, lo0 + i * d, lo0 + i * d + size) for i in range(n)
            if lo0 + i * d < qhi and lo0 + i * d + size > qlo and f.pidx + 3 * i >= known]
    assert got == want
    lo, hi = run.hull()
    assert lo == min(lo0 + i * d for i in range(n)) and hi == max(lo0 + i * d for i in range(n)) + size
