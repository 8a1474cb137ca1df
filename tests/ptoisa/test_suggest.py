""""Did you mean": the closest name first, not difflib's reverse-alphabetical tie order."""

from __future__ import annotations

from ptoisa.suggest import close_matches


def test_one_letter_away_comes_before_two():
    """`pto.tadx` listed 'pto.tmax' and 'pto.tand' (two edits) before 'pto.tadd' (one): difflib's
    ratio ties all three at 0.875 and breaks the tie by the larger string."""
    assert close_matches("pto.tadx", ["pto.tmax", "pto.tand", "pto.tadd", "pto.tsub"]) == \
        ["pto.tadd", "pto.tand", "pto.tmax"]


def test_equal_edits_keep_the_better_ratio_first_and_far_names_out():
    assert close_matches("TADDD", ["tadds", "taddc", "tadd", "tmul"]) == ["tadd", "taddc", "tadds"]
    assert close_matches("vad", ["vadd", "matmul"]) == ["vadd"]
