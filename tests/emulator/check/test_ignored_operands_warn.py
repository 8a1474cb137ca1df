"""An operand the op table marks ``role: ignored`` (a pre-quant scalar on tstore or tmov: the
quantization it selects is target-defined, and the reference model ignores it) is ignored here too,
but never silently: every run that passes one gets a located warning naming it."""

from __future__ import annotations

import numpy as np
import pytest

import pyptoemu


def _tile(loc: str, dt: str, r: int, c: int, bl: str, sl: str, fr: int) -> str:
    return (f"!pto.tile_buf<loc={loc}, dtype={dt}, rows={r}, cols={c}, v_row={r}, v_col={c}, "
            f"blayout={bl}, slayout={sl}, fractal={fr}, pad=0>")


MAT = _tile("mat", "f16", 16, 16, "col_major", "row_major", 512)
LEFT = _tile("left", "f16", 16, 16, "row_major", "row_major", 512)
RIGHT = _tile("right", "f16", 16, 16, "row_major", "col_major", 512)
ACC = _tile("acc", "f32", 16, 16, "col_major", "row_major", 1024)
VEC = _tile("vec", "f32", 16, 16, "row_major", "none_box", 512)


def _matmul_store(quant: bool) -> str:
    store_ins = f"%acc, %q : {ACC}, i64" if quant else f"%acc : {ACC}"
    return f'''module attributes {{pto.target_arch = "a3"}} {{
  func.func @mm(%arg0: !pto.ptr<f16>, %arg1: !pto.ptr<f16>, %arg2: !pto.ptr<f32>)
      attributes {{pto.entry, pto.kernel_kind = #pto.kernel_kind<cube>}} {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %c0_i64 = arith.constant 0 : i64
    %c512_i64 = arith.constant 512 : i64
    %q = arith.constant 4575657222473777152 : i64
    %va = pto.make_tensor_view %arg0, shape = [%c16, %c16], strides = [%c16, %c1] : !pto.tensor_view<?x?xf16>
    %vb = pto.make_tensor_view %arg1, shape = [%c16, %c16], strides = [%c16, %c1] : !pto.tensor_view<?x?xf16>
    %vc = pto.make_tensor_view %arg2, shape = [%c16, %c16], strides = [%c16, %c1] : !pto.tensor_view<?x?xf32>
    %pa = pto.partition_view %va, offsets = [%c0, %c0], sizes = [%c16, %c16] : !pto.tensor_view<?x?xf16> -> !pto.partition_tensor_view<16x16xf16>
    %pb = pto.partition_view %vb, offsets = [%c0, %c0], sizes = [%c16, %c16] : !pto.tensor_view<?x?xf16> -> !pto.partition_tensor_view<16x16xf16>
    %pc = pto.partition_view %vc, offsets = [%c0, %c0], sizes = [%c16, %c16] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<16x16xf32>
    %a_mat = pto.alloc_tile addr = %c0_i64 : {MAT}
    %b_mat = pto.alloc_tile addr = %c512_i64 : {MAT}
    %a_l = pto.alloc_tile addr = %c0_i64 : {LEFT}
    %b_r = pto.alloc_tile addr = %c0_i64 : {RIGHT}
    %acc = pto.alloc_tile addr = %c0_i64 : {ACC}
    pto.tload ins(%pa : !pto.partition_tensor_view<16x16xf16>) outs(%a_mat : {MAT})
    pto.tload ins(%pb : !pto.partition_tensor_view<16x16xf16>) outs(%b_mat : {MAT})
    pto.tmov ins(%a_mat : {MAT}) outs(%a_l : {LEFT})
    pto.tmov ins(%b_mat : {MAT}) outs(%b_r : {RIGHT})
    pto.tmatmul ins(%a_l, %b_r : {LEFT}, {RIGHT}) outs(%acc : {ACC})
    pto.tstore ins({store_ins}) outs(%pc : !pto.partition_tensor_view<16x16xf32>)
    return
  }}
}}
'''


VEC_MOVE = f'''module attributes {{pto.target_arch = "a3"}} {{
  func.func @mv(%arg0: !pto.ptr<f32>, %arg1: !pto.ptr<f32>)
      attributes {{pto.entry, pto.kernel_kind = #pto.kernel_kind<vector>}} {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %c0_i64 = arith.constant 0 : i64
    %c1024_i64 = arith.constant 1024 : i64
    %q = arith.constant 7 : i64
    %vi = pto.make_tensor_view %arg0, shape = [%c16, %c16], strides = [%c16, %c1] : !pto.tensor_view<?x?xf32>
    %vo = pto.make_tensor_view %arg1, shape = [%c16, %c16], strides = [%c16, %c1] : !pto.tensor_view<?x?xf32>
    %pi = pto.partition_view %vi, offsets = [%c0, %c0], sizes = [%c16, %c16] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<16x16xf32>
    %po = pto.partition_view %vo, offsets = [%c0, %c0], sizes = [%c16, %c16] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<16x16xf32>
    %a = pto.alloc_tile addr = %c0_i64 : {VEC}
    %b = pto.alloc_tile addr = %c1024_i64 : {VEC}
    pto.tload ins(%pi : !pto.partition_tensor_view<16x16xf32>) outs(%a : {VEC})
    pto.tmov ins(%a, %q : {VEC}, i64) outs(%b : {VEC})
    pto.tstore ins(%b : {VEC}) outs(%po : !pto.partition_tensor_view<16x16xf32>)
    return
  }}
}}
'''


def _line_of(text: str, op: str) -> tuple[int, int]:
    """(line, column) of the first ``op`` in ``text``."""
    for n, line in enumerate(text.splitlines(), 1):
        if op in line:
            return n, line.index(op) + 1
    raise AssertionError(op)


def _ignored(result) -> list:
    return [f for f in result.findings if f.kind == "ignored"]


def test_tstore_pre_quant_scalar_is_ignored_with_a_located_warning(tmp_path):
    path = tmp_path / "mm.pto"
    text = _matmul_store(quant=True)
    path.write_text(text)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((16, 16)).astype(np.float16)
    b = rng.standard_normal((16, 16)).astype(np.float16)
    for _ in range(2):  # a repeated run of the same text (its checks are kept) warns again
        r = pyptoemu.run(str(path), inputs={"arg0": a, "arg1": b})
        (w,) = _ignored(r)
        assert w.severity == "warning"
        assert (w.locations[0].line, w.locations[0].col) == _line_of(text, "pto.tstore")
        assert "pre_quant" in w.message and "%q" in w.message and "tstore" in w.message
        # ignored as the reference model does: the plain f32 product, not scaled by anything
        np.testing.assert_allclose(r.outputs["arg2"], a.astype(np.float32) @ b.astype(np.float32), rtol=1e-5,
                                   atol=1e-5)


def test_tstore_without_pre_quant_has_no_such_warning(tmp_path):
    path = tmp_path / "mm.pto"
    path.write_text(_matmul_store(quant=False))
    assert _ignored(pyptoemu.run(str(path), data=False)) == []


@pytest.mark.parametrize("data", [True, False])
def test_tmov_quant_scalar_is_ignored_with_a_located_warning(tmp_path, data):
    path = tmp_path / "mv.pto"
    path.write_text(VEC_MOVE)
    x = np.arange(256, dtype=np.float32).reshape(16, 16)
    r = pyptoemu.run(str(path), inputs={"arg0": x} if data else None, data=data)
    (w,) = _ignored(r)
    assert (w.locations[0].line, w.locations[0].col) == _line_of(VEC_MOVE, "pto.tmov") and "quant" in w.message
    if data:
        np.testing.assert_array_equal(r.outputs["arg1"], x)
