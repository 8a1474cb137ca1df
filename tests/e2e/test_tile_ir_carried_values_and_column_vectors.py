"""Tile-level programs as users write them in SSA: (1) a loop that still reads the old value of a
carried tile after computing the new one (``m' = max(m, c)`` then ``exp(m - m')``) was refused by
bufferize ('is read after ..., which replaces it in the same buffer'); the new value now reaches the
yield through a copy. (2) Elementwise ops on row-reduction results (Rx1 column vectors, DN) lowered
to level-2 elementwise instructions on DN tiles, which the verifier refused; they now run on the ND
1xR row view of the same bytes (``pto.treshape``; its valid columns set from the column's run-time
valid rows on a ragged tail), as the compiler lowers them. With hand-written
tokens a copy cannot be ordered for the user, so that loop stays an error at its line."""

from __future__ import annotations

import numpy as np
import pytest

import pyptoemu
from pyptoemu.cli import main
from pyptoemu.errors import PtoError

RUNNING_MAX = """module attributes {pto.target = #pto.target<a3>} {
  func.func @runmax(%x: pto.memref<16x128xf32>, %o: pto.memref<16x1xf32>, %d: pto.memref<16x1xf32>) {
    %c0 = pto.constant 0 : index
    %c32 = pto.constant 32 : index
    %c128 = pto.constant 128 : index
    %ninf = pto.constant -1.0e30 : f32
    %zero = pto.constant 0.0 : f32
    %m0 = pto.tile.expands %ninf : f32 -> tile<16x1xf32>
    %g0 = pto.tile.expands %zero : f32 -> tile<16x1xf32>
    %m, %g = scf.for %c = %c0 to %c128 step %c32 iter_args(%mi = %m0, %gi = %g0) -> (tile<16x1xf32>, tile<16x1xf32>) {
      %t = pto.tile.load %x[%c0, %c] : pto.memref<16x128xf32>, tile<16x32xf32>
      %mc = pto.tile.rowmax %t : tile<16x32xf32> -> tile<16x1xf32>
      %mn = pto.tile.max %mi, %mc : tile<16x1xf32>
      %step = pto.tile.sub %mn, %mi : tile<16x1xf32>
      %gn = pto.tile.max %gi, %step : tile<16x1xf32>
      scf.yield %mn, %gn : tile<16x1xf32>, tile<16x1xf32>
    }
    pto.tile.store %m, %o[%c0, %c0] : pto.memref<16x1xf32>, tile<16x1xf32>
    pto.tile.store %g, %d[%c0, %c0] : pto.memref<16x1xf32>, tile<16x1xf32>
    return
  }
}
"""


def _reference(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    m = np.full(16, -1.0e30, np.float32)
    g = np.zeros(16, np.float32)
    for c in range(0, 128, 32):
        mn = np.maximum(m, x[:, c:c + 32].max(1))
        g = np.maximum(g, mn - m)
        m = mn
    return m, g


def test_a_carried_tile_read_after_its_replacement_is_copied_and_runs(tmp_path):
    path = tmp_path / "runmax.pto"
    path.write_text(RUNNING_MAX)
    x = np.random.default_rng(0).standard_normal((16, 128)).astype(np.float32)
    r = pyptoemu.run(path, inputs={"arg0": x})
    assert not r.findings
    m, g = _reference(x)
    np.testing.assert_array_equal(r.outputs["arg1"].reshape(16), m)
    np.testing.assert_array_equal(r.outputs["arg2"].reshape(16), g)


def test_column_vectors_reach_elementwise_ops_as_row_views(tmp_path):
    path = tmp_path / "runmax.pto"
    path.write_text(RUNNING_MAX)
    out = tmp_path / "lowered.pto"
    assert main(["lower", str(path), "-o", str(out)]) == 0
    text = out.read_text()
    assert "pto.treshape" in text and "rows=1, cols=16" in text
    assert "pto.tile.mov" not in text and "pto.tmov" in text  # the copy of the carried value


def test_with_hand_written_tokens_the_loop_is_still_refused_at_its_line(tmp_path):
    text = RUNNING_MAX.replace(
        "%t = pto.tile.load %x[%c0, %c] : pto.memref<16x128xf32>, tile<16x32xf32>",
        "%t, %et = pto.tile.load %x[%c0, %c] : pto.memref<16x128xf32>, tile<16x32xf32>, "
        "!pto.event<producer = #pto.op<TLOAD>>").replace(
        "%mc = pto.tile.rowmax %t :", "%mc = pto.tile.rowmax %t wait(%et) :")
    path = tmp_path / "tokens.pto"
    path.write_text(text)
    with pytest.raises(PtoError, match=r"tokens\.pto:10:5: error: 'scf\.for' op %mi is read after %mn"):
        pyptoemu.run(path, inputs={"arg0": np.zeros((16, 128), np.float32)})


ROW_MEAN_SQUARED = """module attributes {pto.target = #pto.target<a3>} {
  func.func @rowmean(%x: pto.memref<48x64xf32>, %s: pto.memref<48x1xf32>, %n: index) {
    %c0 = pto.constant 0 : index
    %c16 = pto.constant 16 : index
    %inv = pto.constant 0.015625 : f32
    scf.for %r = %c0 to %n step %c16 {
      %left = pto.subi %n, %r : index
      %vr = pto.mini %left, %c16 : index
      %t = pto.tile.load %x[%r, %c0] {valid = [%vr, 64]} : pto.memref<48x64xf32>, tile<16x64xf32>
      %m = pto.tile.rowsum %t : tile<16x64xf32> -> tile<16x1xf32>
      %mean = pto.tile.muls %m, %inv : tile<16x1xf32>, f32 -> tile<16x1xf32>
      %sq = pto.tile.mul %mean, %mean : tile<16x1xf32>
      pto.tile.store %sq, %s[%r, %c0] : pto.memref<48x1xf32>, tile<16x1xf32>
    }
    return
  }
}
"""


@pytest.mark.parametrize("n", [48, 37, 5])
def test_elementwise_on_column_vectors_of_a_ragged_tail(tmp_path, n):
    path = tmp_path / "rowmean.pto"
    path.write_text(ROW_MEAN_SQUARED)
    x = np.random.default_rng(n).standard_normal((48, 64)).astype(np.float32)
    s = np.full((48, 1), -7.0, np.float32)
    r = pyptoemu.run(path, inputs={"arg0": x, "arg1": s}, args={"arg2": n})
    assert not r.findings
    out = r.outputs["arg1"].reshape(48)
    np.testing.assert_allclose(out[:n], x[:n].mean(1) ** 2, rtol=1e-5, atol=1e-7)
    assert (out[n:] == -7.0).all()  # nothing stored past the ragged tail
    assert pyptoemu.run(path, args={"arg2": n}, data=False).cycles == r.cycles
