"""Loading and validating the instruction specs: every error path, pipe rules, timing formulas."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from ptoisa.isa.describe import format_instruction
from ptoisa.isa.spec import ISA, InstrSpec
from ptoisa.machine import load_machine
from pyptoemu.errors import SpecError
from pyptoemu.isa.runnable import load_isa
from pyptoemu.isa.semantics import SEMANTICS

GOOD_ENTRY = """\
  - mnemonic: tadd
    description: d = a + b
    ins:
      - {name: a, kind: tile, locs: [vec]}
      - {name: b, kind: tile, locs: [vec]}
    outs: [{name: dst, kind: tile, locs: [vec]}]
    dtypes: [f32, f16]
    pipe: V
    domain: dst
    timing: {occupancy: "head + ceil(bytes / repeat_bytes)", latency: "head + 2", params: {head: v_add_head}}
    semantics: binary_add
    implemented: true
"""


def write(tmp_path: Path, body: str, name: str = "fam.yaml") -> Path:
    (tmp_path / name).write_text("family: fam\ninstructions:\n" + body)
    return tmp_path


def load_error(tmp_path: Path, body: str) -> SpecError:
    with pytest.raises(SpecError) as info:
        load_isa(write(tmp_path, body))
    return info.value


def test_good_entry_loads(tmp_path: Path) -> None:
    isa = load_isa(write(tmp_path, GOOD_ENTRY))
    spec = isa.get("TADD")
    assert isinstance(spec, InstrSpec) and spec.family == "fam"
    assert spec.timing.evaluate({"bytes": 1024}) == (14, 14)  # 10 + 4; latency 12 -> raised to 14


@pytest.mark.parametrize(
    ("old", "new", "needle", "line"),
    [
        ("    pipe: V\n", "", "missing field 'pipe'", 3),
        ("    domain: dst\n", "    domain: dst\n    colour: red\n", "unknown key 'colour'", 12),
        ("    pipe: V\n", "    pipe: VV\n", "unknown pipe 'VV'", 10),
        ("    pipe: V\n", "    pipe: {by: src, map: {vec: MTE9}}\n", "unknown pipe 'MTE9'", 10),
        ("    pipe: V\n", "    pipe: {by: sideways, map: {vec: V}}\n", "'by' must be one of", 10),
        ('latency: "head + 2"', 'latency: "head + (2"', "malformed formula", 12),
        ('latency: "head + 2"', 'latency: "__import__(1)"', "malformed formula", 12),
        ('latency: "head + 2"', 'latency: "head.real"', "malformed formula", 12),
        ('latency: "head + 2"', 'latency: "head + widgets"', "unknown variable 'widgets'", 12),
        ("params: {head: v_add_head}", "params: {head: no_such_param}", "unknown variable 'no_such_param'", 12),
        ("    semantics: binary_add\n", "    semantics: binary_frobnicate\n", "unknown semantics key", 13),
        ("    semantics: binary_add\n", "", "missing field 'semantics'", 3),
        ("    dtypes: [f32, f16]\n", "    dtypes: [f32, f17]\n", "unknown dtype 'f17'", 9),
        ("    domain: dst\n", "    domain: everywhere\n", "domain must be one of", 11),
        ("kind: tile, locs: [vec]}\n      - {name: b", "kind: blob, locs: [vec]}\n      - {name: b",
         "unknown kind 'blob'", 6),
        ("    implemented: true\n", "    implemented: maybe\n", "implemented must be true or false", 14),
        ("  - mnemonic: tadd\n", "  - mnemonic: pto.tadd\n", "mnemonic must be", 3),
        ("    implemented: true\n", "    implemented: true\n    dtype_tuples: {operands: [a, q], legal: [[f32, f32]]}\n",
         "dtype_tuples.operands: q (operands of this entry: a, b, dst)", 15),
        ("    implemented: true\n", "    implemented: true\n    dtype_tuples: {operands: [a, b], legal: [[f32]]}\n",
         "dtype_tuples.legal: ['f32'] has 1 dtypes for 2 operands", 15),
    ],
)
def test_entry_errors_name_file_entry_and_line(tmp_path: Path, old: str, new: str, needle: str, line: int) -> None:
    assert old in GOOD_ENTRY
    err = load_error(tmp_path, GOOD_ENTRY.replace(old, new))
    assert needle in err.message
    assert err.loc is not None and err.loc.file.endswith("fam.yaml")
    assert "fam.yaml" in err.message and "'tadd'" in err.message or "mnemonic" in needle
    assert err.loc.line == line, str(err)


def test_unknown_semantics_allowed_for_core_keys(tmp_path: Path) -> None:
    body = GOOD_ENTRY.replace("semantics: binary_add", "semantics: core.whatever")
    assert load_isa(write(tmp_path, body))["tadd"].is_core


def test_unimplemented_may_omit_semantics(tmp_path: Path) -> None:
    body = GOOD_ENTRY.replace("    semantics: binary_add\n", "").replace("implemented: true", "implemented: false")
    assert not load_isa(write(tmp_path, body))["tadd"].implemented


def test_file_level_errors(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("family: a\nstuff: 1\ninstructions: []\n")
    with pytest.raises(SpecError, match="unknown key 'stuff'") as info:
        load_isa(tmp_path)
    assert info.value.loc.line == 2
    (tmp_path / "a.yaml").write_text("family: a\n")
    with pytest.raises(SpecError, match="missing field 'instructions'"):
        load_isa(tmp_path)
    (tmp_path / "a.yaml").write_text("instructions: [\n")
    with pytest.raises(SpecError, match="invalid YAML"):
        load_isa(tmp_path)


def test_duplicate_mnemonic(tmp_path: Path) -> None:
    write(tmp_path, GOOD_ENTRY, "one.yaml")
    write(tmp_path, GOOD_ENTRY, "two.yaml")
    with pytest.raises(SpecError, match="duplicate mnemonic"):
        load_isa(tmp_path)


def test_merge_keys_and_anchors(tmp_path: Path) -> None:
    body = GOOD_ENTRY.replace(
        'timing: {occupancy: "head + ceil(bytes / repeat_bytes)", latency: "head + 2", params: {head: v_add_head}}',
        "timing: {<<: *base, params: {head: 3}}",
    )
    (tmp_path / "f.yaml").write_text(
        'templates:\n  base: &base {occupancy: "head", latency: "head + 1"}\ninstructions:\n' + body
    )
    assert load_isa(tmp_path)["tadd"].timing.evaluate({}) == (3, 4)


def _with_kinds(kinds: str, attrs: str) -> str:
    return ("family: fam\nattr_kinds:\n" + kinds + "instructions:\n"
            + GOOD_ENTRY.replace("    implemented: true\n", "    implemented: true\n    attrs: " + attrs + "\n"))


def test_attr_kinds_load_and_an_attribute_names_one(tmp_path: Path) -> None:
    (tmp_path / "fam.yaml").write_text(_with_kinds("  sat: ['ON', 'OFF']\n", "{mode: {type: sat, default: 'OFF'}}"))
    isa = load_isa(tmp_path)
    assert isa.attr_kinds == {"sat": ("ON", "OFF")}
    assert isa["tadd"].attrs["mode"].type == "sat"


@pytest.mark.parametrize(
    ("kinds", "attrs", "needle"),
    [
        ("  sat: ['ON', 'OFF']\n", "{mode: {type: satt}}", "type 'satt' is neither bool nor i32 nor a kind"),
        ("  sat: ['ON', 'OFF']\n", "{mode: {type: sat, default: CLAMP}}", "'CLAMP' is not a value of sat"),
        ("  sat: ['ON', 'OFF']\n", "{mode: {type: sat, implemented: ['ON', WRAP]}}", "'WRAP' is not a value of sat"),
        ("  sat: [ON, OFF]\n", "{mode: {type: sat}}", "True is not a name (quote values"),
        ("  sat: []\n", "{mode: {type: sat}}", "attr_kinds.sat must be a non-empty list"),
        ("  sat: [wrap, 'WRAP']\n", "{mode: {type: sat}}", "a value is listed twice"),
        ("  bool: [a, b]\n", "{mode: {type: bool}}", "bool is a literal type, not an enum kind"),
    ],
)
def test_attr_kind_errors_name_the_file(tmp_path: Path, kinds: str, attrs: str, needle: str) -> None:
    (tmp_path / "fam.yaml").write_text(_with_kinds(kinds, attrs))
    with pytest.raises(SpecError, match=re.escape(needle)) as info:
        load_isa(tmp_path)
    assert info.value.loc.file.endswith("fam.yaml") and info.value.loc.line >= 1


def test_an_attr_kind_defined_in_two_files_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("attr_kinds:\n  sat: ['ON']\ninstructions: []\n")
    (tmp_path / "b.yaml").write_text("attr_kinds:\n  sat: ['OFF']\ninstructions: []\n")
    with pytest.raises(SpecError, match=r"b.yaml: attr_kinds.sat is defined twice \(first in a.yaml\)"):
        load_isa(tmp_path)


# ------------------------------------------------------------------------------------ the real ISA


def test_real_isa_loads_and_lookup_forms() -> None:
    isa = load_isa()
    assert isinstance(isa, ISA) and len(isa) == 187
    assert isa.get("TROWSUM") is isa.get("pto.trowsum") is isa.get("trowsum")
    assert isa.get("pto.tmatmul.acc").mnemonic == "tmatmul.acc"
    assert isa.get("nope") is None
    assert load_isa() is isa  # cached


def test_every_implemented_semantics_is_registered_and_every_function_used() -> None:
    isa = load_isa()
    used = set()
    for spec in isa.instructions.values():
        if spec.semantics is None:
            assert not spec.implemented, spec.mnemonic
            continue
        if not spec.is_core:
            assert spec.semantics in SEMANTICS, spec.mnemonic
            used.add(spec.semantics)
    assert set(SEMANTICS) - used == set()


def test_matmul_timing_documented_checks() -> None:
    isa = load_isa()
    t = isa["tmatmul"].timing
    assert t.evaluate({"M": 40, "K": 50, "N": 60, "a_esize": 2}) == (62, 62)  # fp16 40x50 * 50x60
    assert t.evaluate({"M": 120, "K": 110, "N": 50, "a_esize": 4}) == (910, 910)  # fp32 120x110 * 110x50
    assert isa["tmatmul.acc"].timing.evaluate({"M": 16, "K": 32, "N": 16, "a_esize": 1}) == (15, 15)  # int8 k0=32


def test_vector_timing_head_repeat_tail() -> None:
    t = load_isa()["tadd"].timing
    # 32 rows of 256 B: one repeat per row
    assert t.evaluate({"bytes": 8192, "rows": 32, "row_bytes": 256}) == (10 + 32 * 2, 10 + 32 * 2 + 14)
    # 64 rows of 128 B: still one repeat per row (not 32 for 8 KiB), plus the unaligned penalty
    assert t.evaluate({"bytes": 8192, "rows": 64, "row_bytes": 128}) == (10 + 64 * 2 + 16, 10 + 64 * 2 + 16 + 14)
    # 2 rows of 1 KiB: 4 repeats each
    assert t.evaluate({"bytes": 2048, "rows": 2, "row_bytes": 1024}) == (10 + 8 * 2, 10 + 8 * 2 + 14)
    # unary ops count repeats over the bytes (st texp f16 64x64 = 95 = 13 + 32 * 2 + 18)
    assert load_isa()["texp"].timing.evaluate({"bytes": 512, "rows": 4, "row_bytes": 128}) == (13 + 4, 13 + 4 + 18)
    # row reductions: 7 per row of up to 256 B, longer rows add their extra repeats first
    red = load_isa()["trowsum"].timing
    assert red.evaluate({"bytes": 16384, "rows": 64, "row_bytes": 256}) == (14 + 64 * 7, 14 + 64 * 7 + 32)
    assert red.evaluate({"bytes": 2048, "rows": 64, "row_bytes": 32}) == (14 + 64 * 7, 14 + 64 * 7 + 32)
    assert red.evaluate({"bytes": 1024, "rows": 1, "row_bytes": 1024})[0] == 14 + 7 + 3 * 2


def test_vector_timing_under_the_cost_model_variant_counts_bytes() -> None:
    isa = load_isa(machine=load_machine("a2a3:ptoisa_cost_model"))
    t = isa["tadd"].timing
    assert t.evaluate({"bytes": 8192, "rows": 64, "row_bytes": 128}) == (10 + 32 * 2, 10 + 32 * 2 + 14)
    assert t.evaluate({"bytes": 100, "rows": 1, "row_bytes": 100}) == (10 + 2 + 16, 10 + 2 + 16 + 14)


def _dma(nbytes: int, pieces: int = 1, bursts: int = 1) -> dict:
    return {"bytes": nbytes, "pieces": pieces, "bursts": bursts, "burst_bytes": nbytes // bursts}


def test_dma_timing_by_path() -> None:
    m = load_machine()
    lat = m.params["lat_gm_to_ub"]
    tload = load_isa()["tload"].timing
    # one DMA: the fixed part holds the pipe, then bytes / 128 (st tload c01: 776 for 64 KiB)
    assert tload.evaluate(_dma(65536), "gm", "vec") == (lat + 512, lat + 512)
    # a 5-D window is one DMA per outer piece, each paying the fixed part (st tload c02: 2624)
    assert tload.evaluate(_dma(65536, pieces=8), "gm", "vec") == (8 * lat + 512, 8 * lat + 512)
    # bursts shorter than dma_min_burst cost as much bandwidth as one of that size
    occ, _ = tload.evaluate(_dma(128 * 100, bursts=100), "gm", "vec")
    assert occ == lat + math.ceil(100 * m.params["dma_min_burst"] / 128)
    assert tload.evaluate(_dma(98 * 10), "gm", "mat")[0] == lat + 10
    tstore = load_isa()["tstore"].timing
    assert tstore.evaluate(_dma(83 * 30), "acc", None)[0] == m.params["lat_l0c_to_gm"] + 30
    # on-chip: lat + bytes / bw, all of it on the pipe
    assert load_isa()["tmov"].timing.evaluate({"bytes": 256 * 4}, "mat", "left")[0] == 45 + 4


@pytest.mark.parametrize(
    ("op", "src", "dst", "pipe"),
    [
        ("tmov", "mat", "left", "MTE1"), ("tmov", "mat", "right", "MTE1"), ("tmov", "mat", "bias", "MTE1"),
        ("tmov", "mat", "scaling", "MTE1"), ("tmov", "acc", "mat", "FIX"), ("tmov", "acc", "vec", "FIX"),
        ("tmov", "vec", "vec", "V"),
        ("tstore", "acc", "gm", "FIX"), ("tstore", "vec", "gm", "MTE3"), ("tstore", "mat", "gm", "MTE3"),
        ("tload", "gm", "vec", "MTE2"), ("tload", "gm", "mat", "MTE2"),
        ("textract", "mat", "left", "MTE1"), ("textract", "acc", "mat", "FIX"), ("textract", "vec", "mat", "FIX"),
        ("textract", "vec", "vec", "V"),
        ("tadd", "vec", "vec", "V"), ("tmatmul", "left", "acc", "M"), ("treshape", "vec", "vec", "none"),
    ],
)
def test_pipe_rules(op: str, src: str, dst: str, pipe: str) -> None:
    assert load_isa()[op].pipe.resolve(src, dst) == pipe


def test_a_move_only_a5_has_resolves_there_and_is_an_error_on_a2a3() -> None:
    """pipe.only_on: tmov vec->mat is A5 only (spec §4.2), tstore from mat A2/A3 only."""
    a5 = load_isa(machine=load_machine("a5"))
    assert a5["tmov"].pipe.resolve("vec", "mat") == "V"
    with pytest.raises(ValueError, match="src_dst 'vec->mat' exists only on a5"):
        load_isa()["tmov"].pipe.resolve("vec", "mat")
    assert load_isa()["tstore"].pipe.resolve("mat", None) == "MTE3"
    with pytest.raises(ValueError, match="src 'mat' exists only on a2a3"):
        a5["tstore"].pipe.resolve("mat", None)


def test_pipe_rule_without_match_raises() -> None:
    with pytest.raises(ValueError, match="no pipe for src 'left'"):
        load_isa()["tstore"].pipe.resolve("left", None)


def test_describe() -> None:
    from ptoisa.isa.describe import format_instruction, format_isa_list

    isa = load_isa()
    listing = format_isa_list(isa)
    assert "187 instructions" in listing and "trowsum" in listing
    text = format_instruction(isa.get("TROWSUM"))
    assert "pto.trowsum" in text and "row_sum" in text and "pipe:        V" in text


def test_isa_dir_env_override(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ptoisa.machine import isa_dir

    monkeypatch.setenv("PYPTOEMU_ISA_DIR", str(tmp_path))
    assert isa_dir() == tmp_path


def test_describe_shows_the_target_rules() -> None:
    """`isa show` prints what the YAML says per target: conversions, A5-only ops and moves, C++ name."""
    isa = load_isa()
    tcvt = format_instruction(isa["tcvt"])
    assert "converts:    f32 -> f32 f16 bf16 i16 i32 i64;" in tcvt and "ui8 -> f16" in tcvt
    assert "C++:         TCVT" in tcvt
    assert "targets:     only a5" in format_instruction(isa["trandom"])
    assert "vec->mat: V (only on a5)" in format_instruction(isa["tmov"])
    assert "dtypes:      i16 i32 f16 f32\n" in format_instruction(isa["tadd"])
    assert "dtypes:      i8 i16 i32 f16 bf16 f32\n" in format_instruction(load_isa(machine=load_machine("a5"))["tadd"])


def test_dtype_tuples_load_and_show() -> None:
    """matmul's legal (a, b, c) combinations are data (§4.8), shown by ``isa show``."""
    spec = load_isa().get("TMATMUL")
    assert spec.dtype_tuples.operands == ("a", "b", "c")
    assert ("bf16", "bf16", "f32") in spec.dtype_tuples.legal and ("bf16", "f16", "f32") not in spec.dtype_tuples.legal
    assert "dtype sets:  (a, b, c) in (i8, i8, i32); (f16, f16, f32)" in format_instruction(spec)


def test_a_formula_text_is_checked_against_each_entrys_own_variables(tmp_path: Path) -> None:
    """Formula texts are parsed once per process (the specs repeat them): the variables are still
    checked per entry. The same text is right where the entry has the param and a located error in
    a later entry that lacks it, and a malformed text is an error each time it is loaded."""
    uses = GOOD_ENTRY.replace('latency: "head + 2"', 'latency: "head + extra"').replace(
        "params: {head: v_add_head}", "params: {head: v_add_head, extra: v_add_head}")
    lacks = GOOD_ENTRY.replace("mnemonic: tadd", "mnemonic: tsub").replace('latency: "head + 2"',
                                                                           'latency: "head + extra"')
    for sub in "abcd":
        (tmp_path / sub).mkdir()
    assert load_isa(write(tmp_path / "a", uses)).get("TADD").timing.evaluate({"bytes": 1024}) == (14, 20)
    err = load_error(tmp_path / "b", uses + lacks)
    assert "entry 'tsub'" in err.message and "unknown variable 'extra'" in err.message
    assert err.loc is not None and err.loc.line == 12 + GOOD_ENTRY.count("\n")
    for sub in ("c", "d"):
        assert "malformed formula 'head.real'" in load_error(tmp_path / sub, GOOD_ENTRY.replace(
            'latency: "head + 2"', 'latency: "head.real"')).message


def test_the_round_modes_the_spec_lists_are_the_ones_tcvt_implements() -> None:
    """isa_specs' round_mode kind (§2.9) and the conversion semantics' modes are one list: a mode
    the verifier accepts must not fail at run time as unknown, and an implemented one must be writable."""
    from pyptoemu.isa.semantics.common import ROUND_MODES

    assert load_isa().attr_kinds["round_mode"] == ROUND_MODES
