"""pto-text-format §5.3: tile shapes the back end warns about (an ND row or a DN column that is not
whole 32-byte blocks) are reported as located
``alignment`` warnings; the run's numbers and exit code do not change."""

from __future__ import annotations

import json

import numpy as np
import pytest

import pyptoemu
from pyptoemu.cli import main
from tests.emulator.core.kernels import pview, vec


def _copy_kernel(rows: int, cols: int, tile: str) -> str:
    """Load a rows x cols f32 window into ``tile`` (declared on line 11) and store it back."""
    return f"""module {{
  func.func @k(%arg0: !pto.ptr<f32>, %arg1: !pto.ptr<f32>) {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %cr = arith.constant {rows} : index
    %cc = arith.constant {cols} : index
    %v0 = pto.make_tensor_view %arg0, shape = [%cr, %cc], strides = [%cc, %c1] : !pto.tensor_view<?x?xf32>
    %v1 = pto.make_tensor_view %arg1, shape = [%cr, %cc], strides = [%cc, %c1] : !pto.tensor_view<?x?xf32>
    %p0 = pto.partition_view %v0, offsets = [%c0, %c0], sizes = [%cr, %cc] : !pto.tensor_view<?x?xf32> -> {pview(rows, cols)}
    %p1 = pto.partition_view %v1, offsets = [%c0, %c0], sizes = [%cr, %cc] : !pto.tensor_view<?x?xf32> -> {pview(rows, cols)}
    %t = pto.alloc_tile : {tile}
    pto.tload ins(%p0 : {pview(rows, cols)}) outs(%t : {tile})
    pto.tstore ins(%t : {tile}) outs(%p1 : {pview(rows, cols)})
    return
  }}
}}
"""


def _alignment(res) -> list:
    return [f for f in res.findings if f.kind == "alignment"]


@pytest.mark.parametrize("rows,cols,tile,needle", [
    (4, 7, vec(4, 7), "ND tile 4x7xf32 has rows of 28 bytes, not a multiple of 32 (cols a multiple of 8"),
    (12, 1, vec(12, 1, blayout="col_major"), "DN tile 12x1xf32 has columns of 48 bytes, not a multiple of 32"),
])
def test_a_misaligned_tile_is_a_located_warning_and_the_numbers_stay(rows, cols, tile, needle):
    x = np.arange(rows * cols, dtype=np.float32).reshape(rows, cols)
    res = pyptoemu.run(_copy_kernel(rows, cols, tile), inputs={"arg0": x})
    np.testing.assert_array_equal(res.outputs["arg1"], x)
    (w,) = _alignment(res)
    assert w.severity == "warning" and needle in w.message and "§5.3" in w.message
    assert (w.locations[0].line, w.locations[0].col) == (11, 5)
    assert res.status == "ok"


def test_an_aligned_tile_has_no_warning():
    x = np.ones((4, 8), np.float32)
    assert _alignment(pyptoemu.run(_copy_kernel(4, 8, vec(4, 8)), inputs={"arg0": x})) == []
    assert _alignment(pyptoemu.run(_copy_kernel(16, 1, vec(16, 1, blayout="col_major")),
                                   inputs={"arg0": np.ones((16, 1), np.float32)})) == []


def test_the_warning_keeps_exit_code_0_and_is_in_the_json(tmp_path, capsys):
    path = tmp_path / "k.pto"
    path.write_text(_copy_kernel(4, 7, vec(4, 7)))
    code = main(["run", str(path), "--json", "--quiet", "--output-dir", str(tmp_path / "out")])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0 and doc["status"] == "ok"
    (w,) = [f for f in doc["findings"] if f["kind"] == "alignment"]
    assert w["severity"] == "warning" and w["locations"] == [f"{path}:11:5"]
