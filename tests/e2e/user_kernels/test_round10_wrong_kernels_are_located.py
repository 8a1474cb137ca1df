"""Tenth red-team round: kernels with mistakes other PTO users make (kernels/r10_bad*.pto, the first
lines of each say what is wrong and what the emulator did before). Each must stop with a located
message and exit 2 (bad input) before anything runs, never run with a silently different meaning."""

from __future__ import annotations

import pytest

import pyptoemu
from ptoisa.errors import PtoError
from tests.e2e.user_kernels.running import KERNELS, cli_json, message_lines


def test_an_atomic_type_the_dialect_does_not_have_is_refused_before_running(tmp_path):
    name = "r10_bad01_store_atomic_sub.pto"
    code, out = cli_json(name, {}, tmp_path)
    assert code == 2, out
    assert message_lines(out, name) == [
        ("15:5: pto.tstore: atomicType = #pto<atomic_type atomic_sub> is not a value of atomic_type "
        "(one of atomic_none, atomic_add)")], out
    with pytest.raises(PtoError, match="atomic_sub"):
        pyptoemu.run(KERNELS / name)


def test_tcvt_attribute_values_outside_their_enums_are_each_located(tmp_path):
    name = "r10_bad02_tcvt_attribute_values.pto"
    code, out = cli_json(name, {}, tmp_path)
    assert code == 2, out
    assert message_lines(out, name) == [
        "16:5: pto.tcvt: sat_mode = #pto<saturation_mode CLAMP> is not a value of saturation_mode (one of ON, OFF)",
        "17:5: pto.tcvt: rmode = #pto<cmp lt> is not a round_mode (write #pto<round_mode VALUE>)",
        "18:5: pto.tcvt: rmode = 3 is not a round_mode (write #pto<round_mode VALUE>)",
    ], out


def test_scalars_of_the_wrong_type_are_refused_where_they_are_used(tmp_path):
    name = "r10_bad03_scalar_types_mixed_up.pto"
    code, out = cli_json(name, {"arg2": 3}, tmp_path)
    assert code == 2, out
    assert message_lines(out, name) == [
        ("17:5: pto.partition_view: 'offsets' (%row) must be an index or an integer, but it is f32 (convert it "
        "first, e.g. arith.fptosi then arith.index_cast)"),
        ("18:5: scf.for: operand 1 (%four) must be an index or an integer, but it is f32 (convert it first, e.g. "
        "arith.fptosi then arith.index_cast)"),
        ("20:7: pto.tmuls: %n is index but written here as f32 (convert it first, e.g. arith.index_cast or "
        "arith.sitofp)"),
        "21:7: scf.if: the condition %n is index, not i1 (compare it first, e.g. arith.cmpi ne, %n, %zero)",
        "26:5: arith.cmpi: an integer op written for f32 (use the float op, e.g. arith.cmpf or arith.addf)",
    ], out


def test_a_tile_whose_valid_region_outgrows_a_static_window_is_refused_before_running(tmp_path):
    name = "r10_bad04_tile_bigger_than_window.pto"
    code, out = cli_json(name, {}, tmp_path)
    assert code == 2, out
    assert message_lines(out, name) == [
        "17:5: pto.tload: the tile's valid region 16x64 exceeds the 15x64 GM window %px",
        "19:5: pto.tstore: the tile's valid region 16x64 exceeds the 1x64 GM window %py",
    ], out
