"""The whole-module verifier folds integer arith on constants (as MLIR's folder would): a window or
an address computed from constants is checked before the run, like a literal one, also in a branch
that never runs. Values are computed as the scalar unit computes them (wrapping to the result type);
what has no value (division by zero) is not folded and faults at its op when it runs."""

from __future__ import annotations

import re

import pytest

import pyptoemu
from ptoisa.text.parser import parse_module
from ptoisa.text.scopes import NameScope
from pyptoemu.cli import main
from pyptoemu.core.fold import fold_integer
from pyptoemu.errors import KernelFault

TILE = ("!pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=64, v_row=16, v_col=64, blayout=row_major, "
        "slayout=none_box, fractal=512, pad=0>")
TV = "!pto.tensor_view<?x?xf32>"


def kernel(body: str) -> str:
    return f"""module {{
  func.func @k(%arg0: !pto.ptr<f32>, %n: index) {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %c64 = arith.constant 64 : index
    %c4 = arith.constant 4 : i32
    %v0 = pto.make_tensor_view %arg0, shape = [%c16, %c64], strides = [%c64, %c1] : {TV}
{body}
    return
  }}
}}
"""


def window(offset: str) -> str:
    return (f"    %p = pto.partition_view %v0, offsets = [%c0, {offset}], sizes = [%c16, %c16] : {TV} -> "
            f"!pto.partition_tensor_view<16x16xf32> //!")


CASES = {
    "muli of an index_cast": (
        "    %k = arith.index_cast %c4 : i32 to index\n    %off = arith.muli %k, %c16 : index\n" + window("%off"),
        r"dim 1 window \[64, 80\) is outside the view's size 64"),
    "subi to a negative offset": (
        "    %off = arith.subi %c0, %c16 : index\n" + window("%off"),
        r"dim 1 window \[-16, 0\) is outside"),
    "divsi and addi": (
        "    %c4x = arith.constant 4 : index\n    %h = arith.divsi %c64, %c4x : index\n"
        "    %off = arith.addi %h, %c64 : index\n" + window("%off"),
        r"dim 1 window \[80, 96\)"),
    "i32 wraps before the cast": (  # 2^31 - 1 + 1 wraps to -2^31 in i32, as the scalar unit computes it
        "    %big = arith.constant 2147483647 : i32\n    %one = arith.constant 1 : i32\n"
        "    %w = arith.addi %big, %one : i32\n    %off = arith.index_cast %w : i32 to index\n" + window("%off"),
        r"window \[-2147483648, "),
    "in a branch that never runs": (
        ("    %never = arith.cmpi slt, %c16, %c0 : index\n    scf.if %never {\n"
         "      %off = arith.muli %c16, %c16 : index\n  " + window("%off") + "\n    }"),
        r"dim 1 window \[256, 272\)"),
    "a misaligned address": (
        ("    %c8 = arith.constant 8 : i64\n    %two = arith.constant 2 : i64\n"
         "    %base = arith.muli %c8, %two : i64\n    %addr = arith.addi %base, %c8 : i64\n"
         f"    %t = pto.alloc_tile addr = %addr : {TILE} //!"),
        r"address 24 in UB is not a multiple of its 32-byte alignment"),
    "an address past the buffer": (
        ("    %kb = arith.constant 1024 : i64\n    %n200 = arith.constant 200 : i64\n"
         "    %addr = arith.muli %kb, %n200 : i64\n"
         f"    %t = pto.alloc_tile addr = %addr : {TILE} //!"),
        r"4096 bytes at address 204800 exceed UB capacity"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_window_or_address_from_constants_is_rejected_before_the_run(name, tmp_path, capsys):
    body, pattern = CASES[name]
    text = kernel(body)
    line = next(i for i, ln in enumerate(text.splitlines(), 1) if ln.rstrip().endswith("//!"))
    path = tmp_path / "k.pto"
    path.write_text(text)
    code = main(["run", str(path), "--no-data", "--quiet", "--arg", "arg1=3", "--output-dir", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert code == 2, err  # bad input, found before anything ran (was a run-time fault, exit 1, or nothing)
    located = [ln for ln in err.splitlines() if ln.startswith(f"{path}:{line}:")]
    assert located, err
    assert any(re.search(pattern, ln) for ln in located), err


def test_a_value_from_a_run_time_argument_is_not_folded():
    """%n is a scalar argument: the window is decided when it runs (in range for n = 3)."""
    text = kernel("    %off = arith.muli %n, %c16 : index\n" + window("%off").removesuffix(" //!"))
    res = pyptoemu.run(text, args={"arg1": 3}, data=False)
    assert res.cycles >= 0
    with pytest.raises(KernelFault, match=r"window \[64, 80\)"):
        pyptoemu.run(text, args={"arg1": 4}, data=False)


def test_division_by_zero_is_not_folded_and_faults_where_it_runs():
    text = kernel("    %z = arith.divsi %c16, %c0 : index //!\n" + window("%z").removesuffix(" //!"))
    line = next(i for i, ln in enumerate(text.splitlines(), 1) if ln.rstrip().endswith("//!"))
    with pytest.raises(KernelFault, match="division by zero") as info:
        pyptoemu.run(text, args={"arg1": 0}, data=False)
    assert info.value.loc.line == line


def _folded(body: str) -> dict:
    module = parse_module(kernel(body), "k.pto")
    scope = NameScope(module.functions[0], fold=fold_integer)
    seen = {}
    for _op, _ in scope.walk():
        seen.update(scope.constants)
    return seen


def test_folded_values_follow_the_scalar_units_arith():
    got = _folded("    %a = arith.subi %c0, %c16 : index\n    %b = arith.remsi %a, %c64x : index\n"
                  "    %c64x = arith.constant 64 : index\n"
                  "    %m = arith.constant -8 : i32\n    %u = arith.shrui %m, %c4 : i32\n"
                  "    %s = arith.shrsi %m, %c4 : i32\n    %x = arith.index_castui %m : i32 to index\n"
                  "    %big = arith.constant 40 : i32\n    %bad = arith.shli %c4, %big : i32\n"
                  "    %q = arith.floordivsi %a, %c1 : index")
    assert got["%a"] == -16
    assert "%b" not in got  # %c64x is defined after the use: not a constant there
    assert got["%u"] == (2**32 - 8) >> 4 and got["%s"] == -1 and got["%x"] == 2**32 - 8
    assert "%bad" not in got  # a shift by 40 of an i32 has no value: left to the run (a fault there)
    assert got["%q"] == -16
