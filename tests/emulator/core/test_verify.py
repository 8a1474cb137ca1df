"""The whole-module verifier: every op of every function and branch is checked before anything
runs, every error is reported at once with its location, and pto.target_arch picks the machine."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest

import pyptoemu
from ptoisa.text import ast as A
from pyptoemu.api import choose_entry, load_kernel
from pyptoemu.cli import main
from pyptoemu.core.verify import ModuleVerifyError
from pyptoemu.errors import VerifyError
from tests.emulator.core.kernels import binary_kernel, pview, vec

ROOT = Path(__file__).resolve().parents[3]
T = vec(16, 64)
P = pview(16, 64)
MAT = T.replace("loc=vec", "loc=mat")


def _guarded(body: str, scalar: str = "i1") -> str:
    """A kernel whose `body` sits in a branch taken only when the scalar argument is true."""
    text = binary_kernel(f"""
    %x = pto.alloc_tile : {T}
    %z = pto.alloc_tile : {T}
    pto.tload ins(%p0 : {P}) outs(%x : {T})
    scf.if %flag {{
{body}
    }}
    pto.tstore ins(%x : {T}) outs(%p2 : {P})""")
    return text.replace("%arg2: !pto.ptr<f32>)", f"%arg2: !pto.ptr<f32>, %flag: {scalar})")


def test_an_ill_typed_op_in_a_branch_that_never_runs_is_reported():
    text = _guarded(f"    %m = pto.alloc_tile : {MAT}\n    pto.tadd ins(%x, %x : {T}, {T}) outs(%m : {MAT})")
    with pytest.raises(VerifyError, match=r"<string>:\d+:\d+: pto.tadd: outs operand 0 \(%m\) is in mat; "
                                          r"this op takes vec"):
        pyptoemu.run(text, args={"arg3": False})


def test_every_error_is_reported_at_once_in_line_order():
    text = _guarded(f"""    %m = pto.alloc_tile : {MAT}
    pto.tadd ins(%x, %x : {T}, {T}) outs(%m : {MAT})
    pto.texp ins(%c0 : index) outs(%z : {T})
    %w = pto.alloc_tile : {vec(16, 64, vr=32)}""")
    with pytest.raises(ModuleVerifyError) as info:
        pyptoemu.run(text, args={"arg3": False})
    lines = str(info.value).splitlines()
    assert len(lines) == 3, lines
    assert "outs operand 0 (%m) is in mat" in lines[0]
    assert "pto.texp: ins operand 0 (%c0) must be a tile" in lines[1]
    assert "valid region 32x64 exceeds tile shape 16x64" in lines[2]
    rows = [int(line.split(":")[1]) for line in lines]
    assert rows == sorted(rows) and all(line.startswith("<string>:") for line in lines)


def test_verify_errors_exit_2_on_the_command_line(tmp_path, capsys):
    k = tmp_path / "k.pto"
    k.write_text(_guarded(f"    pto.texp ins(%c0 : index) outs(%z : {T})"))
    assert main(["run", str(k), "--arg", "arg3=false", "--output-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"{k}:" in err and "must be a tile" in err and "Traceback" not in err


def test_an_entry_that_returns_a_value_is_rejected():
    text = binary_kernel("").replace("    return\n  }", "    return %c0 : index\n  }").replace(
        "!pto.ptr<f32>) {", "!pto.ptr<f32>) -> index {")
    with pytest.raises(VerifyError, match=r"<string>:2:\d+: the kernel entry @k returns a value \(index\)"):
        pyptoemu.run(text)


RECURSIVE = """module {
  func.func @k(%arg0: !pto.ptr<f32>) attributes {pto.entry} {
    func.call @helper() : () -> ()
    return
  }
  func.func private @helper() {
    func.call @helper() : () -> ()
    return
  }
}
"""


def test_recursion_is_a_located_error_not_a_python_recursion_error():
    with pytest.raises(VerifyError, match=r"<string>:7:\d+: recursive call \(@helper -> @helper\)"):
        pyptoemu.run(RECURSIVE)


def test_a_call_with_the_wrong_argument_count_is_found_before_running():
    text = RECURSIVE.replace("func.call @helper() : () -> ()\n    return\n  }\n  func.func private",
                             "func.call @helper(%arg0) : (!pto.ptr<f32>) -> ()\n    return\n  }\n  func.func private"
                             ).replace("    func.call @helper() : () -> ()\n    return\n  }\n}", "    return\n  }\n}")
    with pytest.raises(VerifyError, match=r"<string>:3:\d+: @helper takes 0 arguments, 1 given"):
        pyptoemu.run(text)


def test_ops_missing_operands_are_located():
    text = binary_kernel("    %s = pto.subset %x : !pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=64>")
    with pytest.raises(VerifyError, match=r"<string>:\d+:\d+: pto.subset needs 3 operands, got 1"):
        pyptoemu.run(text)


def _arch(text: str, arch: str) -> str:
    return text.replace("module {", f'module attributes {{pto.target_arch = "{arch}"}} {{', 1)


def test_target_arch_a5_runs_on_the_a5_model():
    text = _arch(binary_kernel(f"""
    %x = pto.alloc_tile : {T}
    pto.tload ins(%p0 : {P}) outs(%x : {T})
    pto.tstore ins(%x : {T}) outs(%p2 : {P})"""), "a5")
    assert pyptoemu.run(text).machine == "a5"
    assert pyptoemu.run(_arch(text, "a3").replace('"a5"', '"a3"')).machine == "a2a3"


def test_forcing_another_machine_than_the_target_arch_is_a_located_error():
    text = _arch(binary_kernel(""), "a5")
    with pytest.raises(VerifyError, match=r'<string>:1:1: the module is compiled for pto.target_arch = "a5" '
                                          r"\(machine a5\) but --machine a2a3 was asked for"):
        pyptoemu.run(text, machine="a2a3")
    assert pyptoemu.run(text, machine="a5").machine == "a5"


def test_an_unknown_target_arch_is_a_located_error():
    with pytest.raises(VerifyError, match=r'<string>:1:1: pto.target_arch = "a9" is not a machine'):
        pyptoemu.run(_arch(binary_kernel(""), "a9"))


def test_the_examples_pass_the_verifier_unchanged():
    for path in sorted((ROOT / "examples").glob("*.pto")):
        fn = choose_entry(load_kernel(path), None)
        args = {f"arg{i}": True if t.name == "i1" else 64
                for i, t in enumerate(fn.arg_types) if isinstance(t, A.ScalarType)}
        res = pyptoemu.run(path, races="off", args=args)
        assert res.machine == "a2a3", path


def test_a_tile_of_4m_rows_is_rejected_before_anything_is_allocated():
    huge = ("!pto.tile_buf<loc=mat, dtype=f16, rows=4194304, cols=16, v_row=4194304, v_col=16, "
            "blayout=col_major, slayout=row_major, fractal=512, pad=0>")
    text = binary_kernel(f"    %big = pto.alloc_tile : {huge}")
    tracemalloc.start()
    try:
        with pytest.raises(VerifyError, match=r"<string>:\d+:\d+: pto.alloc_tile: a 4194304x16xf16 tile needs at "
                                              r"least 134217728 bytes but L1 \(mat\) holds"):
            pyptoemu.run(text)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 * 2**20


def test_a_call_passing_a_pointer_where_a_number_belongs_is_found_before_running():
    text = RECURSIVE.replace("func.call @helper() : () -> ()\n    return\n  }\n  func.func private @helper() {",
                             "func.call @helper(%arg0) : (!pto.ptr<f32>) -> ()\n    return\n  }\n"
                             "  func.func private @helper(%n: index) {")
    text = text.replace("    func.call @helper() : () -> ()\n    return\n  }\n}", "    return\n  }\n}")
    with pytest.raises(VerifyError, match=r"<string>:3:\d+: func.call: argument 0 \(%arg0\) is a !pto.ptr<f32> but "
                                          r"@helper takes a index"):
        pyptoemu.run(text)


def _while_kernel(after_body: str) -> str:
    """A kernel with an scf.while carrying an index %j (never iterated) whose after-region holds
    ``after_body`` over the region argument %j2."""
    return binary_kernel(f"""
    %x = pto.alloc_tile : {T}
    pto.tload ins(%p0 : {P}) outs(%x : {T})
    %w = scf.while (%j = %c0) : (index) -> (index) {{
      %lt = arith.cmpi slt, %j, %c0 : index
      scf.condition(%lt) %j : index
    }} do {{
    ^bb0(%j2: index):
{after_body}
    }}
    pto.tstore ins(%x : {T}) outs(%p2 : {P})""")


def test_an_arith_op_written_for_another_width_than_its_operand_is_rejected():
    text = binary_kernel("    %one = arith.constant 1 : i32\n    %s = arith.addi %c0, %one : i32")
    with pytest.raises(VerifyError, match=r"<string>:\d+:5: arith.addi: operand %c0 is index but the op is written "
                                          r"for i32"):
        pyptoemu.run(text)


def test_while_region_arguments_are_typed_before_running():
    """The after-region argument %j2 is an index: using it as an i32 is found although the loop
    body never runs."""
    body = ("      %one = arith.constant 1 : i32\n      %jn = arith.addi %j2, %one : i32\n"
            "      %jx = arith.index_cast %jn : i32 to index\n      scf.yield %jx : index")
    with pytest.raises(VerifyError, match=r"<string>:\d+:7: arith.addi: operand %j2 is index"):
        pyptoemu.run(_while_kernel(body))
    ok = "      %jn = arith.addi %j2, %c1 : index\n      scf.yield %jn : index"
    assert pyptoemu.run(_while_kernel(ok)).cycles > 0


def test_select_needs_an_i1_condition():
    text = binary_kernel("    %s = arith.select %c1, %c0, %c1 : index")
    with pytest.raises(VerifyError, match=r"arith.select: the condition %c1 is index, not i1"):
        pyptoemu.run(text)
