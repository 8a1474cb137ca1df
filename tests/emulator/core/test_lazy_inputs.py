"""Stand-in inputs are drawn lazily: only the pieces of GM a kernel touches get random numbers, and
an element's value does not depend on which tiles were read before it."""

from __future__ import annotations

import gc
import tracemalloc
import weakref

import numpy as np

import pyptoemu
from pyptoemu.core.memory import STANDIN_CHUNK, GMBuffer
from tests.emulator.core.kernels import pview, vec

TILE_ROWS, TILE_COLS = 16, 64


def _gather_kernel(rows: int, cols: int, corners: list[tuple[int, int]]) -> str:
    """@k(%arg0: rows x cols input, %arg1: len(corners) tiles stacked): copies the 16x64 tile at
    each (row, col) of arg0 into the next 16 rows of arg1."""
    out_rows = TILE_ROWS * len(corners)
    consts = {0, 1, TILE_ROWS, TILE_COLS, rows, cols, out_rows}
    for i, (r, c) in enumerate(corners):
        consts |= {r, c, TILE_ROWS * i}
    tv, tile, win = "!pto.tensor_view<?x?xf32>", vec(TILE_ROWS, TILE_COLS), pview(TILE_ROWS, TILE_COLS)
    lines = [f"    %c{n} = arith.constant {n} : index" for n in sorted(consts)]
    lines.append(f"    %vin = pto.make_tensor_view %arg0, shape = [%c{rows}, %c{cols}], strides = [%c{cols}, %c1] : {tv}")
    lines.append(f"    %vout = pto.make_tensor_view %arg1, shape = [%c{out_rows}, %c{TILE_COLS}], "
                 f"strides = [%c{TILE_COLS}, %c1] : {tv}")
    lines.append(f"    %t = pto.alloc_tile : {tile}")
    sizes = f"sizes = [%c{TILE_ROWS}, %c{TILE_COLS}]"
    for i, (r, c) in enumerate(corners):
        lines.append(f"    %src{i} = pto.partition_view %vin, offsets = [%c{r}, %c{c}], {sizes} : {tv} -> {win}")
        lines.append(f"    pto.tload ins(%src{i} : {win}) outs(%t : {tile})")
        lines.append(f"    %dst{i} = pto.partition_view %vout, offsets = [%c{TILE_ROWS * i}, %c0], {sizes} : {tv} -> {win}")
        lines.append(f"    pto.tstore ins(%t : {tile}) outs(%dst{i} : {win})")
    body = "\n".join(lines)
    return f"""module {{
  func.func @k(%arg0: !pto.ptr<f32>, %arg1: !pto.ptr<f32>) {{
{body}
    return
  }}
}}
"""


def test_a_few_tiles_of_a_huge_view_draw_only_their_numbers():
    """8192 x 25600 f32 (800 MiB of stand-in data) of which the kernel reads three 16x64 tiles:
    the numbers drawn and the memory allocated are those of the tiles' rows, not of the view."""
    rows, cols = 8192, 25600
    corners = [(0, 0), (4096, 12800), (rows - TILE_ROWS, cols - TILE_COLS)]
    kernel = _gather_kernel(rows, cols, corners)
    tracemalloc.start()
    try:
        res = pyptoemu.run(kernel)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 32 * 2**20, f"peak {peak / 2**20:.0f} MiB traced for three tiles"
    gm = res.chip.memory.gm[0]
    assert gm.size == rows * cols
    drawn = int((~gm.pending).sum())
    assert 0 < drawn <= len(corners) * TILE_ROWS  # one piece per tile row at most
    assert drawn * STANDIN_CHUNK < gm.size // 200  # under 0.5% of the view drawn
    out = res.outputs["arg1"]
    assert out.shape == (TILE_ROWS * len(corners), TILE_COLS)
    assert np.isfinite(out).all() and np.unique(out).size == out.size  # drawn numbers, not zeros


def test_lazily_drawn_tiles_equal_the_input_drawn_in_full():
    """The tiles a kernel reads hold the same numbers whether the whole input was drawn first (a
    kernel that copies every tile) or only they were, in any order."""
    rows, cols = 32, 47 * TILE_COLS  # rows cross the pieces' boundaries at varying columns
    everything = [(r, c) for r in range(0, rows, TILE_ROWS) for c in range(0, cols, TILE_COLS)]
    full = pyptoemu.run(_gather_kernel(rows, cols, everything)).outputs["arg1"]
    full_input = np.concatenate([full[TILE_ROWS * i:TILE_ROWS * (i + 1)] for i in range(len(everything))])
    grid = full_input.reshape(rows // TILE_ROWS, cols // TILE_COLS, TILE_ROWS, TILE_COLS)
    picks = [(16, cols - TILE_COLS), (0, 23 * TILE_COLS), (16, TILE_COLS)]
    for order in (picks, picks[::-1]):
        out = pyptoemu.run(_gather_kernel(rows, cols, order)).outputs["arg1"]
        for i, (r, c) in enumerate(order):
            np.testing.assert_array_equal(out[TILE_ROWS * i:TILE_ROWS * (i + 1)],
                                          grid[r // TILE_ROWS, c // TILE_COLS])


def _scatter_kernel(out_rows: int, out_cols: int, corners: list[tuple[int, int]], in_cols: int = TILE_COLS) -> str:
    """@k(%arg0: TILE_ROWS x in_cols input, %arg1: out_rows x out_cols): stores the input's first
    16x64 tile at each (row, col) of arg1 (arg1 is never read)."""
    consts = {0, 1, TILE_ROWS, TILE_COLS, out_rows, out_cols, in_cols}
    for r, c in corners:
        consts |= {r, c}
    tv, tile, win = "!pto.tensor_view<?x?xf32>", vec(TILE_ROWS, TILE_COLS), pview(TILE_ROWS, TILE_COLS)
    sizes = f"sizes = [%c{TILE_ROWS}, %c{TILE_COLS}]"
    lines = [f"    %c{n} = arith.constant {n} : index" for n in sorted(consts)]
    lines.append(f"    %vin = pto.make_tensor_view %arg0, shape = [%c{TILE_ROWS}, %c{in_cols}], "
                 f"strides = [%c{in_cols}, %c1] : {tv}")
    lines.append(f"    %vout = pto.make_tensor_view %arg1, shape = [%c{out_rows}, %c{out_cols}], "
                 f"strides = [%c{out_cols}, %c1] : {tv}")
    lines.append(f"    %t = pto.alloc_tile : {tile}")
    lines.append(f"    %src = pto.partition_view %vin, offsets = [%c0, %c0], {sizes} : {tv} -> {win}")
    lines.append(f"    pto.tload ins(%src : {win}) outs(%t : {tile})")
    for i, (r, c) in enumerate(corners):
        lines.append(f"    %dst{i} = pto.partition_view %vout, offsets = [%c{r}, %c{c}], {sizes} : {tv} -> {win}")
        lines.append(f"    pto.tstore ins(%t : {tile}) outs(%dst{i} : {win})")
    body = "\n".join(lines)
    return f"""module {{
  func.func @k(%arg0: !pto.ptr<f32>, %arg1: !pto.ptr<f32>) {{
{body}
    return
  }}
}}
"""


def _drawn_pieces(monkeypatch) -> list:
    """Records (argument index, piece) of every stand-in piece drawn from now on."""
    drawn: list = []
    original = GMBuffer._draw

    def spy(self, k, written):
        drawn.append((self.index, k))
        return original(self, k, written)

    monkeypatch.setattr(GMBuffer, "_draw", spy)
    return drawn


def test_an_output_written_in_full_draws_no_stand_in_numbers(monkeypatch):
    """Every element of arg1 is stored before anything reads it: none of its pieces is drawn (each
    piece is covered by several tile stores, none of which covers it alone)."""
    rows, cols = 32, 16 * TILE_COLS  # two pieces of 16384 elements, each covered by 16 stores
    corners = [(r, c) for r in range(0, rows, TILE_ROWS) for c in range(0, cols, TILE_COLS)]
    x = np.arange(TILE_ROWS * TILE_COLS, dtype=np.float32).reshape(TILE_ROWS, TILE_COLS)
    drawn = _drawn_pieces(monkeypatch)
    out = pyptoemu.run(_scatter_kernel(rows, cols, corners), inputs={"arg0": x}).outputs["arg1"]
    assert drawn == []
    np.testing.assert_array_equal(out, np.tile(x, (rows // TILE_ROWS, cols // TILE_COLS)))


def test_an_output_written_in_part_keeps_its_stand_in_numbers_elsewhere(monkeypatch):
    """Elements no store covers hold the numbers a draw of the whole argument gives, whichever
    pieces were drawn when; the stored tiles hold the input."""
    rows, cols = 48, 7 * TILE_COLS  # pieces end mid-row
    corners = [(16, 64), (0, 6 * TILE_COLS), (32, 0)]
    x = np.arange(TILE_ROWS * TILE_COLS, dtype=np.float32).reshape(TILE_ROWS, TILE_COLS)
    drawn = _drawn_pieces(monkeypatch)
    out = pyptoemu.run(_scatter_kernel(rows, cols, corners), inputs={"arg0": x}).outputs["arg1"]
    assert {i for i, _ in drawn} == {1}  # the output's partly written pieces, drawn for the result
    reference = GMBuffer(1, "f32", np.dtype(np.float32))
    reference.reserve_standin(rows * cols, 0)
    expect = reference.data.reshape(rows, cols).copy()
    for r, c in corners:
        expect[r:r + TILE_ROWS, c:c + TILE_COLS] = x
    np.testing.assert_array_equal(out, expect)


def _owner(a: np.ndarray) -> np.ndarray:
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def test_an_outputs_memory_goes_with_the_result():
    """A run's objects reference each other, so they are freed by the garbage collector, not when
    the result is dropped: the GM arrays are not theirs to keep (GMBuffer.release), so an output
    and the stand-in data under it are freed with the result, and the next run reuses that memory
    instead of faulting in fresh pages. The written-elements mask goes once every piece is drawn."""
    rows, cols = 32, 2 * TILE_COLS
    corners = [(r, c) for r in range(0, rows, TILE_ROWS) for c in range(0, cols, TILE_COLS)]
    x = np.ones((TILE_ROWS, TILE_COLS), np.float32)
    enabled = gc.isenabled()
    gc.disable()
    try:
        res = pyptoemu.run(_scatter_kernel(rows, cols, corners), inputs={"arg0": x})
        gm = res.chip.memory.gm[1]
        assert gm.store is None and gm.covered is None and gm.size == rows * cols  # described, not held
        out = res.outputs["arg1"]
        np.testing.assert_array_equal(out, np.ones((rows, cols), np.float32))
        backing = weakref.ref(_owner(out))
        del res, gm, out
        assert backing() is None  # freed with the result, no collection needed
    finally:
        if enabled:
            gc.enable()


def _standin(rows: int, cols: int) -> tuple[GMBuffer, np.ndarray]:
    """arg1 as stand-in data of rows x cols, and the numbers a draw of all of it gives."""
    gm = GMBuffer(1, "f32", np.dtype(np.float32))
    gm.reserve_standin(rows * cols, 0)
    reference = GMBuffer(1, "f32", np.dtype(np.float32))
    reference.reserve_standin(rows * cols, 0)
    return gm, reference.data.reshape(rows, cols).copy()


def test_a_read_after_stores_keeps_what_they_wrote():
    """Whole-window stores are marked written only when a piece is about to be drawn: a read that
    draws the pieces they fell in (here a row band across both) keeps what they wrote, and the rest
    of those pieces holds the drawn numbers."""
    from pyptoemu.core.memory import PartitionView

    rows, cols = 32, 1024  # two pieces of 16 rows
    gm, expect = _standin(rows, cols)
    tiles = [(0, 0), (8, 512), (16, 64)]  # the second straddles the two pieces
    for k, (r, c) in enumerate(tiles):
        value = np.full((TILE_ROWS // 2, TILE_COLS), k + 1, np.float32)
        PartitionView(gm, r * cols + c, (TILE_ROWS // 2, TILE_COLS), (cols, 1)).write(value)
        expect[r:r + TILE_ROWS // 2, c:c + TILE_COLS] = value
    assert gm.unmarked and gm.covered is None  # nothing marked before something draws
    band = PartitionView(gm, 4 * cols, (20, cols), (cols, 1)).read()
    np.testing.assert_array_equal(band, expect[4:24])
    assert not gm.unmarked
    np.testing.assert_array_equal(gm.data.reshape(rows, cols), expect)


def test_stores_waiting_to_be_marked_are_bounded():
    """A long run of stores into pieces nothing draws keeps at most UNMARKED_WINDOWS of them
    waiting; the marks made on the way hold what the stores wrote."""
    from pyptoemu.core.memory import UNMARKED_WINDOWS, PartitionView

    rows, cols = 16, 64
    gm, expect = _standin(rows, cols)
    for k in range(UNMARKED_WINDOWS + 5):
        r = k % rows
        PartitionView(gm, r * cols, (1, cols), (cols, 1)).write(np.full((1, cols), k, np.float32))
        expect[r] = k
        assert len(gm.unmarked) < UNMARKED_WINDOWS
    assert gm.covered is not None
    np.testing.assert_array_equal(gm.data.reshape(rows, cols), expect)
