"""tgather out-of-range, tci wrap, ttri diagonals, tfillpad and tload pad values."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from tests.emulator.isa.semantic_corners.kern import vec
from tests.emulator.isa.semantic_corners.sem import S, T, bits, one, row, zeros


def test_tgather_out_of_range_is_zero():
    src = T(np.arange(1, 9, dtype=np.float32).reshape(2, 4), "f32")
    idx = row([0, 7, 8, -1, 5, 2**31 - 1], "i32")
    got = one("tgather", [src, idx], T(np.full((1, 6), 9.0), "f32"))
    assert got[0].tolist() == [1.0, 8.0, 0.0, 0.0, 6.0, 0.0]


def test_tgather_flat_index_uses_tile_cols_not_valid_region():
    """flat = r*src.cols + c over the tile's static shape; an index into the tile outside src's valid
    region still reads that element (emulator choice; "out of range" = outside the tile)."""
    src = T(np.arange(1, 17, dtype=np.float32).reshape(2, 8), "f32", 1, 4)
    got = one("tgather", [src, row([4, 8, 15, 16], "i32")], zeros(1, 4, "f32"))
    assert got[0].tolist() == [5.0, 9.0, 16.0, 0.0]


def test_tci_descending_wraps_i16():
    got = one("tci", [S(-32767, "i16")], zeros(1, 4, "i16"), {"descending": True})
    assert got.tolist() == [[-32767, -32768, 32767, 32766]]
    got = one("tci", [S(32766, "i16")], zeros(1, 4, "i16"))
    assert got.tolist() == [[32766, 32767, -32768, -32767]]
    got = one("tci", [S(2**31 - 2, "i32")], zeros(1, 3, "i32"))
    assert got.tolist() == [[2**31 - 2, 2**31 - 1, -2**31]]


def test_tci_only_valid_cols():
    got = one("tci", [S(5, "i32")], zeros(1, 8, "i32", vcol=3), {"descending": True})
    assert got.tolist() == [[5, 4, 3]]


@pytest.mark.parametrize("diag", [-2, -1, 0, 1, 3])
@pytest.mark.parametrize("upper", [0, 1])
def test_ttri(diag, upper):
    got = one("ttri", [S(diag, "i32")], zeros(4, 5, "f32"), {"upperOrLower": upper})
    want = [[(1.0 if j <= i + diag else 0.0) if upper == 0 else (0.0 if j < i + diag else 1.0) for j in range(5)]
            for i in range(4)]
    assert got.tolist() == want


def test_ttri_negative_diag_explicit():
    got = one("ttri", [S(-2, "i32")], zeros(4, 4, "i32"))
    assert got.tolist() == [[0, 0, 0, 0], [0, 0, 0, 0], [1, 0, 0, 0], [1, 1, 0, 0]]
    got = one("ttri", [S(-2, "i32")], zeros(4, 4, "i32"), {"upperOrLower": 1})
    assert got.tolist() == [[1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1], [0, 1, 1, 1]]


PADS = {  # dtype -> (pad 1, pad 2, pad 3), §5.5
    "i8": (0, 127, -128), "i16": (0, 32767, -32768), "i32": (0, 2**31 - 1, -2**31),
    "ui8": (0, 255, 0), "ui16": (0, 65535, 0), "ui32": (0, 2**32 - 1, 0),
    "f32": (0.0, np.inf, -np.inf), "f16": (0.0, np.inf, -np.inf), "bf16": (0.0, np.inf, -np.inf),
}


@pytest.mark.parametrize("dtype", sorted(PADS))
@pytest.mark.parametrize("pad", [1, 2, 3])
def test_tfillpad_values(dtype, pad):
    src = T(np.full((2, 4), 5), dtype, 1, 2)
    got = one("tfillpad", [src], zeros(2, 4, dtype, pad=pad))
    want = np.full((2, 4), PADS[dtype][pad - 1], dtype=object)
    want[0, :2] = 5
    assert got.shape == (2, 4)
    assert [[float(v) for v in r] for r in got.tolist()] == [[float(v) for v in r] for r in want.tolist()]
    if pad == 1 and dtype in ("f32", "f16", "bf16"):
        assert not np.signbit(got[1, 3].astype(np.float32))  # +0.0


@pytest.mark.parametrize("dtype", ["f16", "bf16", "i16", "ui16", "f32"])
@pytest.mark.parametrize("pad", [1, 2, 3])
def test_tload_pad_fill_in_a_kernel(dtype, pad):
    """tload a 1x8 window into a 2x16 tile (runtime valid 1x8) with pad p; widen the valid region to
    the whole tile with set_validshape and store it: the tail must hold the pad value (§5.5)."""
    import pyptoemu
    npd = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "i16": np.int16, "ui16": np.uint16,
           "f32": np.float32}[dtype]
    t = vec(2, 16, dtype, "?", "?", pad=pad)
    tv = f"!pto.tensor_view<?x?x{dtype}>"
    text = f"""module {{
  func.func @k(%arg0: !pto.ptr<{dtype}>, %arg1: !pto.ptr<{dtype}>) {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
    %v0 = pto.make_tensor_view %arg0, shape = [%c2, %c16], strides = [%c16, %c1] : {tv}
    %v1 = pto.make_tensor_view %arg1, shape = [%c2, %c16], strides = [%c16, %c1] : {tv}
    %w0 = pto.partition_view %v0, offsets = [%c0, %c0], sizes = [%c1, %c8] : {tv} -> !pto.partition_tensor_view<1x8x{dtype}>
    %w1 = pto.partition_view %v1, offsets = [%c0, %c0], sizes = [%c2, %c16] : {tv} -> !pto.partition_tensor_view<2x16x{dtype}>
    %t = pto.alloc_tile valid_row = %c1 valid_col = %c8 : {t}
    pto.tload ins(%w0 : !pto.partition_tensor_view<1x8x{dtype}>) outs(%t : {t})
    pto.barrier <PIPE_ALL>
    pto.set_validshape %t, %c2, %c16 : {t}
    pto.tstore ins(%t : {t}) outs(%w1 : !pto.partition_tensor_view<2x16x{dtype}>)
    return
  }}
}}
"""
    res = pyptoemu.run(text, inputs={"arg0": np.full((2, 16), 3, npd), "arg1": np.full((2, 16), 7, npd)})
    got = res.outputs["arg1"].astype(np.float64)
    pv = float(PADS[dtype][pad - 1])
    assert got[0, :8].tolist() == [3.0] * 8
    assert got[0, 8:].tolist() == [pv] * 8 and got[1].tolist() == [pv] * 16
    if pad == 1 and dtype in ("f16", "bf16", "f32"):
        assert set(bits(res.outputs["arg1"][1])) == {0}
