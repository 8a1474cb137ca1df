"""Red-team: malformed or invalid kernels must fail with a precise `file:line:col` message and the
documented exit code (2 bad input, 1 kernel fault), never a Python traceback.

The cases at the end were emulator bugs found by the red team; they pass since the fixes.
"""

from __future__ import annotations

import re

from pyptoemu import cli

HDR = """module {
  func.func @k(%arg0: !pto.ptr<f32>, %arg1: !pto.ptr<f32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %c32 = arith.constant 32 : index
    %v0 = pto.make_tensor_view %arg0, shape = [%c16, %c32], strides = [%c32, %c1] : !pto.tensor_view<?x?xf32>
    %v1 = pto.make_tensor_view %arg1, shape = [%c16, %c32], strides = [%c32, %c1] : !pto.tensor_view<?x?xf32>
    %p0 = pto.partition_view %v0, offsets = [%c0, %c0], sizes = [%c16, %c32]
        : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<16x32xf32>
    %p1 = pto.partition_view %v1, offsets = [%c0, %c0], sizes = [%c16, %c32]
        : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<16x32xf32>
"""
TAIL = """    return
  }
}
"""
HDR_LINES = HDR.count("\n")
T = "!pto.tile_buf<vec, 16x32xf32>"
H = "!pto.tile_buf<vec, 16x32xf16>"
PV = "!pto.partition_tensor_view<16x32xf32>"
LOAD = f"    pto.tload ins(%p0 : {PV}) outs(%a : {T})\n"
STORE = f"    pto.tstore ins(%a : {T}) outs(%p1 : {PV})\n"
LEFT = "!pto.tile_buf<left, 16x32xf16, slayout=row_major>"
RIGHT = "!pto.tile_buf<right, 16x16xf16, slayout=col_major>"
ACC = "!pto.tile_buf<acc, 16x16xf32, blayout=col_major, slayout=row_major, fractal=1024>"


def _run(tmp_path, capsys, name: str, body: str, *extra: str):
    path = tmp_path / f"{name}.pto"
    path.write_text(HDR + body + TAIL)
    rc = cli.main(["run", str(path), "--output-dir", str(tmp_path / "out"), *extra])
    cap = capsys.readouterr()
    text = cap.out + cap.err
    assert "Traceback" not in text, text
    return rc, text, str(path)


def _line_of(body: str, needle: str) -> int:
    """1-based line of `needle` in the assembled file."""
    for i, line in enumerate(body.splitlines()):
        if needle in line:
            return HDR_LINES + i + 1
    raise AssertionError(needle)


def _assert_loc(text: str, path: str, line: int | None = None):
    m = re.search(re.escape(path) + r":(\d+):(\d+):", text)
    assert m, f"no {path}:line:col in: {text}"
    if line is not None:
        assert int(m.group(1)) == line, text


# ---- correctly diagnosed -----------------------------------------------------------------------

def test_undefined_ssa_value(tmp_path, capsys):
    body = f"    %a = pto.alloc_tile : {T}\n    pto.tload ins(%p0 : {PV}) outs(%nope : {T})\n"
    rc, text, path = _run(tmp_path, capsys, "undef", body)
    assert rc == 2
    _assert_loc(text, path, _line_of(body, "%nope"))
    assert "%nope" in text


def test_syntax_error_missing_paren(tmp_path, capsys):
    body = f"    %a = pto.alloc_tile : {T}\n    pto.tload ins(%p0 : {PV} outs(%a : {T})\n"
    rc, text, path = _run(tmp_path, capsys, "syntax", body)
    assert rc == 2
    _assert_loc(text, path, _line_of(body, "pto.tload"))


def test_valid_row_larger_than_rows(tmp_path, capsys):
    body = ("    %a = pto.alloc_tile : !pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=32, v_row=17, v_col=32, "
            "blayout=row_major, slayout=none_box, fractal=512, pad=0>\n")
    rc, text, path = _run(tmp_path, capsys, "vrow", body)
    assert rc == 2
    _assert_loc(text, path)


def test_partition_window_outside_view(tmp_path, capsys):
    body = (f"    %c8 = arith.constant 8 : index\n"
            f"    %pb = pto.partition_view %v0, offsets = [%c8, %c0], sizes = [%c16, %c32]"
            f" : !pto.tensor_view<?x?xf32> -> {PV}\n"
            f"    %a = pto.alloc_tile : {T}\n    pto.tload ins(%pb : {PV}) outs(%a : {T})\n" + STORE)
    rc, text, path = _run(tmp_path, capsys, "oob", body)
    assert rc in (1, 2)
    _assert_loc(text, path, _line_of(body, "%pb = pto.partition_view"))
    assert "[8, 24)" in text


def test_ub_capacity_exceeded(tmp_path, capsys):
    big = "!pto.tile_buf<vec, 256x256xf32>"
    body = (f"    %a = pto.alloc_tile : {big}\n    %one = arith.constant 1.0 : f32\n"
            f"    pto.texpands ins(%one : f32) outs(%a : {big})\n")
    rc, text, path = _run(tmp_path, capsys, "cap", body)
    assert rc == 2  # a tile bigger than its buffer is found by the verifier, before anything runs
    _assert_loc(text, path, _line_of(body, "alloc_tile"))
    assert "262144" in text


def test_missing_v_to_mte3_flag_is_a_race(tmp_path, capsys):
    body = (f"    %z = arith.constant 0 : i64\n    %z2 = arith.constant 2048 : i64\n"
            f"    %a = pto.alloc_tile addr = %z : {T}\n    %b = pto.alloc_tile addr = %z2 : {T}\n"
            + LOAD +
            "    pto.set_flag[<PIPE_MTE2>, <PIPE_V>, <EVENT_ID0>]\n"
            "    pto.wait_flag[<PIPE_MTE2>, <PIPE_V>, <EVENT_ID0>]\n"
            f"    pto.tadd ins(%a, %a : {T}, {T}) outs(%b : {T})\n"
            f"    pto.tstore ins(%b : {T}) outs(%p1 : {PV})\n")
    rc, text, path = _run(tmp_path, capsys, "race", body)
    assert rc == 1
    m = re.search(re.escape(path) + r":(\d+):\d+: error: race: RAW on UB bytes \[2048, 4096\)", text)
    assert m, text
    assert int(m.group(1)) == _line_of(body, "pto.tadd")


def test_missing_v_barrier_is_a_race(tmp_path, capsys):
    body = (f"    %z = arith.constant 0 : i64\n    %one = arith.constant 1.0 : f32\n"
            f"    %a = pto.alloc_tile addr = %z : {T}\n" + LOAD +
            "    pto.set_flag[<PIPE_MTE2>, <PIPE_V>, <EVENT_ID0>]\n"
            "    pto.wait_flag[<PIPE_MTE2>, <PIPE_V>, <EVENT_ID0>]\n"
            f"    pto.tadds ins(%a, %one : {T}, f32) outs(%a : {T})\n"
            f"    pto.tmuls ins(%a, %one : {T}, f32) outs(%a : {T})\n"
            "    pto.set_flag[<PIPE_V>, <PIPE_MTE3>, <EVENT_ID0>]\n"
            "    pto.wait_flag[<PIPE_V>, <PIPE_MTE3>, <EVENT_ID0>]\n" + STORE)
    rc, text, _ = _run(tmp_path, capsys, "vbar", body)
    assert rc == 1
    assert "race: RAW" in text and "pto.barrier <PIPE_V>" in text


def test_wait_that_is_never_set_deadlocks(tmp_path, capsys):
    body = (f"    %a = pto.alloc_tile : {T}\n" + LOAD +
            "    pto.wait_flag[<PIPE_V>, <PIPE_MTE3>, <EVENT_ID3>]\n" + STORE)
    rc, text, path = _run(tmp_path, capsys, "deadlock", body)
    assert rc == 1
    _assert_loc(text, path, _line_of(body, "wait_flag"))
    assert "EVENT_ID3" in text


def test_dynamic_event_id_out_of_range(tmp_path, capsys):
    # known only when it runs, block 0's index + 9 (a constant id is rejected before running:
    # test_verify_rejects_folded_and_target_rules_everywhere)
    body = (f"    %a = pto.alloc_tile : {T}\n    %nine = arith.constant 9 : index\n    %blk = pto.get_block_idx\n"
            "    %b0 = arith.index_cast %blk : i64 to index\n    %c9 = arith.addi %b0, %nine : index\n" + LOAD +
            "    pto.set_flag_dyn [#pto.pipe<PIPE_MTE2>, #pto.pipe<PIPE_MTE3>, %c9]\n"
            "    pto.wait_flag_dyn [#pto.pipe<PIPE_MTE2>, #pto.pipe<PIPE_MTE3>, %c9]\n" + STORE)
    rc, text, path = _run(tmp_path, capsys, "evid", body)
    assert rc == 1
    _assert_loc(text, path, _line_of(body, "set_flag_dyn"))
    assert "event id 9" in text


def test_missing_scalar_argument(tmp_path, capsys):
    path = tmp_path / "scalar.pto"
    path.write_text("func.func @k(%n: index) {\n  return\n}\n")
    rc = cli.main(["run", str(path), "--output-dir", str(tmp_path / "out")])
    text = "".join(capsys.readouterr())
    assert rc == 2 and "--arg arg0=" in text and "Traceback" not in text


def test_declared_but_unimplemented_op_is_located(tmp_path, capsys):
    body = f"    %a = pto.alloc_tile : {T}\n    pto.tpush_to_aic(%a : {T}) {{split = 0}}\n"
    rc, text, path = _run(tmp_path, capsys, "fifo", body)
    assert rc != 0
    _assert_loc(text, path, _line_of(body, "tpush_to_aic"))


# ---- found by the red team, fixed since ---------------------------------------------------------

MM_BODY = (f"    %a = pto.alloc_tile : {LEFT}\n    %b = pto.alloc_tile : {RIGHT}\n    %c = pto.alloc_tile : {ACC}\n"
           f"    pto.tmatmul ins(%a, %b : {LEFT}, {RIGHT}) outs(%c : {ACC})\n")


def test_matmul_static_shape_mismatch_is_located_bad_input(tmp_path, capsys):
    rc, text, path = _run(tmp_path, capsys, "mm", MM_BODY)
    _assert_loc(text, path, _line_of(MM_BODY, "pto.tmatmul"))
    assert rc == 2


DSET_BODY = (f"    %a = pto.alloc_tile : {T}\n" + LOAD +
             "    pto.set_flag[<PIPE_MTE2>, <PIPE_MTE3>, <EVENT_ID0>]\n"
             "    pto.set_flag[<PIPE_MTE2>, <PIPE_MTE3>, <EVENT_ID0>]\n"
             "    pto.wait_flag[<PIPE_MTE2>, <PIPE_MTE3>, <EVENT_ID0>]\n" + STORE)


def test_double_set_before_wait_is_reported(tmp_path, capsys):
    rc, text, _ = _run(tmp_path, capsys, "dset", DSET_BODY)
    assert "double-set" in text
    assert rc == 1


def test_double_set_leaves_a_located_warning(tmp_path, capsys):
    # Besides the double set, the unconsumed second set is reported where it was made.
    _, text, path = _run(tmp_path, capsys, "dset2", DSET_BODY)
    assert "flag-left-set" in text
    _assert_loc(text, path)


def test_mixed_dtype_elementwise_rejected(tmp_path, capsys):
    body = (f"    %a = pto.alloc_tile : {T}\n    %b = pto.alloc_tile : {H}\n" + LOAD +
            f"    pto.tadd ins(%a, %b : {T}, {H}) outs(%a : {T})\n" + STORE)
    rc, text, path = _run(tmp_path, capsys, "mixed", body)
    assert rc == 2
    _assert_loc(text, path, _line_of(body, "pto.tadd"))


def test_use_type_differs_from_definition(tmp_path, capsys):
    body = f"    %a = pto.alloc_tile : {T}\n    pto.tload ins(%p0 : {PV}) outs(%a : {H})\n"
    rc, text, path = _run(tmp_path, capsys, "usetype", body)
    assert rc == 2
    _assert_loc(text, path, _line_of(body, "pto.tload"))


def test_dynamic_valid_without_valid_row_rejected(tmp_path, capsys):
    dyn = "!pto.tile_buf<vec, 16x32xf32, valid=?x32>"
    body = (f"    %a = pto.alloc_tile : {dyn}\n    pto.tload ins(%p0 : {PV}) outs(%a : {dyn})\n"
            f"    pto.tstore ins(%a : {dyn}) outs(%p1 : {PV})\n")
    rc, text, path = _run(tmp_path, capsys, "dynvalid", body)
    assert rc == 2
    _assert_loc(text, path, _line_of(body, "alloc_tile"))


def test_set_validshape_on_static_tile_rejected(tmp_path, capsys):
    body = f"    %a = pto.alloc_tile : {T}\n    pto.set_validshape %a, %c16, %c16 : {T}\n"
    rc, text, path = _run(tmp_path, capsys, "svs", body)
    assert rc == 2
    _assert_loc(text, path, _line_of(body, "set_validshape"))


def test_tmov_vec_to_left_rejected(tmp_path, capsys):
    v = "!pto.tile_buf<vec, 16x16xf16>"
    lt = "!pto.tile_buf<left, 16x16xf16, slayout=row_major>"
    body = f"    %a = pto.alloc_tile : {v}\n    %b = pto.alloc_tile : {lt}\n    pto.tmov ins(%a : {v}) outs(%b : {lt})\n"
    rc, text, path = _run(tmp_path, capsys, "tmovpair", body)
    assert rc == 2
    _assert_loc(text, path, _line_of(body, "pto.tmov"))


def test_unknown_op_name_is_bad_input(tmp_path, capsys):
    body = f"    %a = pto.alloc_tile : {T}\n    pto.tfrobnicate ins(%a : {T}) outs(%a : {T})\n"
    rc, text, path = _run(tmp_path, capsys, "unknown", body)
    _assert_loc(text, path, _line_of(body, "tfrobnicate"))
    assert rc == 2
