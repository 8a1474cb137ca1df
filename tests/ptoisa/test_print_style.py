"""The one printer writes the compiler's spelling of the text format too (``PrintStyle``), and every
spelling reads back to the same module."""

from __future__ import annotations

from pathlib import Path

import pytest

from ptoisa.text.parser import parse_module
from ptoisa.text.printer import PrintStyle, print_module

GOLDEN = Path(__file__).resolve().parents[1] / "compiler" / "golden"
COMPILER_STYLE = PrintStyle(short_enum_kinds=frozenset({"pipe", "event"}), function_attrs_on_new_line=True,
                            bare_return=True, float_format=".6e")


@pytest.mark.parametrize("name", ["vector_add.pto", "add_kernel.pto", "mul_kernel_2d.pto"])
def test_compiler_style_reprints_the_golden_files_byte_for_byte(name):
    text = (GOLDEN / name).read_text()
    assert print_module(parse_module(text, name), COMPILER_STYLE) == text


def test_each_style_choice_changes_only_its_spelling():
    text = (GOLDEN / "add_kernel.pto").read_text()
    canonical = print_module(parse_module(text, "a.pto"))
    assert "pto.barrier #pto.pipe<PIPE_V>" in canonical and "pto.barrier <PIPE_V>" in text
    assert "func.return" in canonical and "\n    return\n" in text
    assert "arith.constant 1.0 : f32" in canonical and "arith.constant 1.000000e+00 : f32" in text
    assert "\n      attributes {pto.kernel_kind" in text and "\n      attributes" not in canonical
    # both spellings read back to the same module
    assert print_module(parse_module(canonical, "b.pto"), COMPILER_STYLE) == text
