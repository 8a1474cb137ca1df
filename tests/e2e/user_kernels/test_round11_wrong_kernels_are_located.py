"""Eleventh red-team round: kernels with mistakes other PTO users make (kernels/r11_bad05.. and
later; the first lines of each say what is wrong and what the emulator did before). Each must stop
with a located message and exit 2 (bad input) before anything runs (tsort32 and tconcat were
located faults, exit 1, until the op table gained the constraints the types decide)."""

from __future__ import annotations

from tests.e2e.user_kernels.running import cli_json, message_lines


def test_a_tile_op_with_a_source_missing_or_one_too_many_is_refused_saying_what_it_takes(tmp_path):
    name = "r11_bad05_operand_counts.pto"
    code, out = cli_json(name, {}, tmp_path)
    assert code == 2, out
    assert message_lines(out, name) == [
        "19:5: pto.tadd takes 2 ins operand(s) (a, b), got 1",
        "20:5: pto.tadd takes 2 ins operand(s) (a, b), got 3",
    ], out


def test_a_vector_tile_stored_to_a_window_of_another_element_size_is_refused(tmp_path):
    name = "r11_bad06_vec_f32_stored_to_f16_view.pto"
    code, out = cli_json(name, {}, tmp_path)
    assert code == 2, out
    assert message_lines(out, name) == [
        ("17:5: pto.tstore: a vec f32 tile stored to a f16 window: a store from vec copies elements unchanged "
         "(only an acc source converts to the GM type); convert it first with pto.tcvt"),
    ], out


def test_row_and_column_broadcast_operands_of_the_wrong_extent_are_refused_before_running(tmp_path):
    name = "r11_bad07_broadcast_operand_extents.pto"
    code, out = cli_json(name, {}, tmp_path)
    assert code == 2, out
    assert message_lines(out, name) == [
        ("19:5: pto.trowexpandmul: %r has 8 rows but the destination's valid region has 16; each source gives dst's "
         "rows their values"),
        ("20:5: pto.tcolexpandsub: %c has 32 columns but the destination's valid region has 64; each source gives "
         "dst's columns their values"),
    ], out


def test_an_element_read_or_write_written_with_another_type_than_the_elements_is_refused(tmp_path):
    name = "r11_bad08_element_access_types.pto"
    code, out = cli_json(name, {}, tmp_path)
    assert code == 2, out
    tail = "but the value is f16; an element access has the element's type (convert the value itself, e.g. " \
           "arith.truncf or arith.extf)"
    assert message_lines(out, name) == [
        f"18:5: pto.tgetval: %t holds f32 elements {tail}",
        f"19:5: pto.load_scalar: %x points to f32 elements {tail}",
        f"23:5: pto.store_scalar: %y points to f32 elements {tail}",
    ], out


def test_tsort32_without_tmp_on_a_row_not_a_multiple_of_32_is_refused_before_running(tmp_path):
    name = "r11_bad09_tsort32_ragged_without_tmp.pto"
    code, out = cli_json(name, {}, tmp_path)
    assert code == 2, out
    assert "20:5: pto.tsort32" in out, out


def test_tconcat_into_a_destination_narrower_than_both_sources_is_refused_before_running(tmp_path):
    name = "r11_bad10_tconcat_result_wider_than_dst.pto"
    code, out = cli_json(name, {}, tmp_path)
    assert code == 2, out
    assert "18:5: pto.tconcat" in out, out
