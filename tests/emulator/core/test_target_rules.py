"""Kernels the PTO toolchain rejects for the target are rejected here before anything runs, in a
branch that never executes too: dtypes a target lacks (the spec's dtype lists are the union over
targets; ``target_dtypes`` narrows them), conversions it lacks, ops only another target has, event
ids it does not have, rules only one target has (``target_constraints``: tmov's equal static shapes
on A2/A3, tpart*'s source matching dst there). The same kernel is legal where the spec says it is (A5)."""

from __future__ import annotations

import shutil

import pytest

import pyptoemu
from ptoisa.errors import SpecError
from ptoisa.isa.loader import load_isa
from ptoisa.machine import isa_dir, load_machine
from pyptoemu.core.verify import ModuleVerifyError
from tests.emulator.core.kernels import binary_kernel, pview, vec

T = vec(16, 64)


def _guarded(body: str) -> str:
    """A correct f32 kernel with ``body`` in a branch taken only when the i1 argument is true."""
    text = binary_kernel(f"""
    %x = pto.alloc_tile : {T}
    pto.tload ins(%p0 : {pview(16, 64)}) outs(%x : {T})
    scf.if %flag {{
{body}
    }}
    pto.tstore ins(%x : {T}) outs(%p2 : {pview(16, 64)})""")
    return text.replace("%arg2: !pto.ptr<f32>)", "%arg2: !pto.ptr<f32>, %flag: i1)")


def _tile(dtype: str) -> str:
    return vec(16, 64, dtype)


I8, I32, U8 = _tile("i8"), _tile("i32"), _tile("ui8")
CASES = {
    "tadd i8 (A5 only)": (f"    %a = pto.alloc_tile : {I8}\n    pto.tadd ins(%a, %a : {I8}, {I8}) outs(%a : {I8})",
                          r"pto.tadd: destination element type i8 is not supported \(legal: i16, i32, f16, f32\)"),
    "tdiv i32 (A5 only)": (f"    %a = pto.alloc_tile : {I32}\n    pto.tdiv ins(%a, %a : {I32}, {I32}) outs(%a : {I32})",
                           r"pto.tdiv: destination element type i32 is not supported \(legal: f16, f32\)"),
    "tcvt ui8->f32": ((f"    %a = pto.alloc_tile : {U8}\n    pto.tcvt ins(%a {{rmode = #pto<round_mode CAST_RINT>}} : {U8}) "
                      f"outs(%x : {T})"), r"pto.tcvt: a2a3 does not convert ui8 to f32 \(ui8 converts to f16\)"),
    "EVENT_ID8": ("    pto.set_flag[<PIPE_V>, <PIPE_MTE3>, <EVENT_ID8>]",
                  r"pto.set_flag: event id 8 is out of range: a2a3 has EVENT_ID0..EVENT_ID7"),
    "tmov of unequal static shapes (A3 rule)": (
        f"    %h = pto.alloc_tile : {vec(16, 32)}\n    pto.tmov ins(%x : {T}) outs(%h : {vec(16, 32)})",
        r"pto.tmov on a2a3: the source is 16x64 but the destination 16x32 \(same rows/cols\)"),
    "tpartadd with both sources smaller than dst (A3 rule)": (
        (f"    %a = pto.alloc_tile : {vec(16, 64, vr=8, vc=64)}\n    %b = pto.alloc_tile : {vec(16, 64, vr=16, vc=32)}\n"
         f"    pto.tpartadd ins(%a, %b : {vec(16, 64, vr=8, vc=64)}, {vec(16, 64, vr=16, vc=32)}) outs(%x : {T})"),
        (r"pto.tpartadd on a2a3: one source's valid region must equal the destination's 16x64; the sources' are "
         r"8x64 and 16x32")),
    "trandom (A5 only)": (("    %k = arith.constant 1 : i32\n"
                          f"    %a = pto.alloc_tile : {I32}\n"
                          f"    pto.trandom ins(%k, %k, %k, %k, %k, %k : i32, i32, i32, i32, i32, i32) outs(%a : {I32})"),
                          r"pto.trandom exists only on a5; this kernel runs on a2a3"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_an_op_the_target_lacks_is_a_located_error_before_running(name):
    body, message = CASES[name]
    with pytest.raises(ModuleVerifyError, match=r"<string>:\d+:\d+: " + message):
        pyptoemu.run(_guarded(body), args={"arg3": 0}, data=False)


@pytest.mark.parametrize("name", ["tadd i8 (A5 only)", "tdiv i32 (A5 only)", "trandom (A5 only)",
                                  "tmov of unequal static shapes (A3 rule)",
                                  "tpartadd with both sources smaller than dst (A3 rule)"])
def test_the_same_op_verifies_on_the_target_that_has_it(name):
    body, _ = CASES[name]
    res = pyptoemu.run(_guarded(body), args={"arg3": 0}, data=False, machine="a5")
    assert res.cycles > 0


def test_target_dtypes_must_narrow_the_union(tmp_path):
    """A ``target_dtypes`` list naming a dtype the entry does not list is a spec error at its line."""
    copy = tmp_path / "isa_specs"
    shutil.copytree(isa_dir(), copy)
    path = copy / "instructions" / "elementwise.yaml"
    text = path.read_text()
    path.write_text(text.replace("target_dtypes: {a2a3: [f16, f32]}", "target_dtypes: {a2a3: [f16, f32, i64]}", 1))
    with pytest.raises(SpecError, match=r"elementwise.yaml:\d+:\d+: .*target_dtypes.a2a3: i64 not in the entry's "
                                        r"dtypes"):
        load_isa(copy / "instructions", load_machine("a2a3"))


def _spec_copy_with(tmp_path, old: str, new: str):
    """A copy of isa_specs whose data_movement.yaml has ``old`` replaced by ``new``."""
    copy = tmp_path / "isa_specs"
    shutil.copytree(isa_dir(), copy)
    path = copy / "instructions" / "data_movement.yaml"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    return copy / "instructions"


TMOV_RULE = "target_constraints: {a2a3: [same_shape]}"


def test_target_constraints_apply_on_their_target_only():
    assert "same_shape" in load_isa(machine=load_machine("a2a3")).instructions["tmov"].constraints
    assert "same_shape" not in load_isa(machine=load_machine("a5")).instructions["tmov"].constraints


@pytest.mark.parametrize(("bad", "message"), [
    ("target_constraints: {a2a3: [same_shapes]}", r"target_constraints.a2a3: unknown constraint 'same_shapes'"),
    ("target_constraints: {a2a3: same_shape}", r"target_constraints.a2a3 must be a list"),
    ("target_constraints: [same_shape]", r"target_constraints must be a mapping"),
    ("target_constraints: {a2a3: [same_shape, same_shape]}", r"target_constraints.a2a3: a constraint is listed twice"),
    ("target_constraints: {a5: [same_shape]}\n    constraints: [same_shape]",
     r"target_constraints.a5: same_shape is already in the entry's constraints"),
])
def test_a_bad_target_constraints_entry_is_a_spec_error_at_its_line(tmp_path, bad, message):
    """Every target's list is validated whichever machine is loaded (a5's on a2a3 too)."""
    spec = _spec_copy_with(tmp_path, TMOV_RULE, bad)
    with pytest.raises(SpecError, match=r"data_movement.yaml:\d+:\d+: .*entry 'tmov': " + message):
        load_isa(spec, load_machine("a2a3"))
