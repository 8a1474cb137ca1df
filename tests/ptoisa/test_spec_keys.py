"""The spec keys the compiler and the printer read: operand role and dtypes, cpp, conversions,
syntax; each loads into its record, a bad value is a precise error, and an edit of the YAML alone
changes what the printer writes."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from ptoisa.errors import SpecError
from ptoisa.isa.loader import load_isa
from ptoisa.text.parser import parse_module
from ptoisa.text.printer import print_module

ROOT = Path(__file__).resolve().parents[2]
ENTRY = """\
family: fam
instructions:
  - mnemonic: tfoo.acc
    description: d = a + b
    ins:
      - {name: a, kind: tile, locs: [vec], dtypes: [f16]}
      - {name: tmp, kind: tile, locs: [vec], optional: true, role: scratch}
    outs: [{name: dst, kind: tile, locs: [vec]}]
    dtypes: [f32, f16]
    pipe: V
    domain: dst
    timing: {occupancy: "2", latency: "3"}
    semantics: binary_add
    implemented: true
"""


def _load(tmp_path: Path, text: str):
    (tmp_path / "fam.yaml").write_text(text)
    return load_isa(tmp_path)


def test_new_keys_load_into_the_record(tmp_path):
    extra = ("    cpp: TFOO_ACC_X\n    conversions: {f32: [f16, i32]}\n"
             "    syntax: {form: paren, attr_dict: first, operand_types: each, indexed: {base: 1}, groups: bare}\n")
    spec = _load(tmp_path, ENTRY + extra)["tfoo.acc"]
    assert [o.role for o in spec.ins] == ["data", "scratch"] and spec.ins[1].is_scratch
    assert spec.ins[0].dtypes == ("f16",) and spec.ins[1].dtypes is None
    assert spec.cpp == "TFOO_ACC_X" and spec.conversions == {"f32": ("f16", "i32")}
    syn = spec.syntax
    assert (syn.form, syn.attr_dict_first, syn.operand_types, syn.indexed, syn.groups) == \
        ("paren", True, "each", (1, None), "bare")


def test_cpp_spelling_defaults_to_the_upper_case_mnemonic(tmp_path):
    assert _load(tmp_path, ENTRY)["tfoo.acc"].cpp == "TFOO_ACC"


@pytest.mark.parametrize(("old", "new", "needle"), [
    ("role: scratch}", "role: spare}", "role must be one of data, scratch"),
    ("dtypes: [f16]}", "dtypes: [f99]}", "unknown dtype 'f99'"),
    ("    implemented: true\n", "    implemented: true\n    cpp: 2x\n", "cpp must be a C++ identifier"),
    ("    implemented: true\n", "    implemented: true\n    conversions: {f32: [q8]}\n", "unknown dtype 'q8'"),
    ("    implemented: true\n", "    implemented: true\n    syntax: {form: curly}\n", "syntax.form must be one of"),
    ("    implemented: true\n", "    implemented: true\n    syntax: {indexed: {count: 1}}\n", "missing"),
])
def test_bad_values_are_errors_at_the_entry(tmp_path, old, new, needle):
    assert old in ENTRY
    with pytest.raises(SpecError, match=re.escape(needle)) as info:
        _load(tmp_path, ENTRY.replace(old, new))
    assert "fam.yaml" in str(info.value)


def test_the_real_specs_describe_the_scratch_operands_and_syntax_forms():
    isa = load_isa(ROOT / "isa_specs" / "instructions")
    assert [o.name for o in isa["trowsum"].ins if o.is_scratch] == ["tmp"]
    assert isa["set_flag"].syntax.form == "bracket"
    assert isa["tcvt"].syntax.attrs_in_ins
    assert isa["eventid_array_set"].syntax.indexed == (0, 1)


def test_the_printer_follows_a_yaml_edit_of_a_syntax_form(tmp_path, monkeypatch):
    specs = tmp_path / "isa_specs"
    shutil.copytree(ROOT / "isa_specs", specs)
    tb = "!pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, blayout=row_major, " \
         "slayout=none_box, fractal=512, pad=0>"
    text = (f"module {{\n  func.func @k(%a: {tb}, %b: {tb}) {{\n"
            f"    pto.tcvt ins(%a {{rmode = #pto<round_mode FLOOR>}} : {tb}) outs(%b : {tb})\n"
            "    func.return\n  }\n}\n")
    module = parse_module(text, "k.pto")
    assert "ins(%a {rmode = #pto<round_mode FLOOR>} :" in print_module(module)
    conv = specs / "instructions" / "conversion.yaml"
    conv.write_text(conv.read_text().replace("syntax: {attrs_in_ins: true}", "syntax: {}", 1))
    monkeypatch.setenv("PYPTOEMU_ISA_DIR", str(specs))
    assert f"outs(%b : {tb}) {{rmode = #pto<round_mode FLOOR>}}" in print_module(module)
