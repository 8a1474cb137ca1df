"""SSA names are scoped to their region (MLIR): the then- and else-branch of one scf.if, or two
loop bodies, may each define the same name with different types, and each use reads its own
region's value - in the verifier (types) and in the run (values, checked against NumPy). A name is
not visible in a sibling region, before its definition or after its region ends, and it is not
defined again where it is visible (no shadowing): each is a located error before anything runs."""

from __future__ import annotations

import re

import numpy as np
import pytest

import pyptoemu
from pyptoemu.core.verify import ModuleVerifyError
from tests.emulator.core.kernels import binary_kernel, pview, vec

T, H = vec(16, 64), vec(16, 32)
P, PH = pview(16, 64), pview(16, 32)


def _two_branch_kernel() -> str:
    """%t is a 16x64 tile (x + x) in the then-branch and a 16x32 tile (left half of x, times x) in
    the else-branch; each branch stores its own %t; %n is an index in one branch, an f32 in the other."""
    text = binary_kernel(f"""
    %x = pto.alloc_tile : {T}
    pto.tload ins(%p0 : {P}) outs(%x : {T})
    pto.barrier <PIPE_ALL>
    scf.if %flag {{
      %t = pto.alloc_tile : {T}
      %n = arith.constant 3 : index
      pto.tadd ins(%x, %x : {T}, {T}) outs(%t : {T})
      pto.barrier <PIPE_ALL>
      pto.tstore ins(%t : {T}) outs(%p2 : {P})
    }} else {{
      %t = pto.alloc_tile : {H}
      %n = arith.constant 2.5 : f32
      %h = pto.alloc_tile : {H}
      pto.textract ins(%x, %c0, %c0 : {T}, index, index) outs(%h : {H})
      pto.barrier <PIPE_ALL>
      pto.tmul ins(%h, %h : {H}, {H}) outs(%t : {H})
      pto.barrier <PIPE_ALL>
      %q = pto.partition_view %v2, offsets = [%c0, %c0], sizes = [%cr, %c32] : !pto.tensor_view<?x?xf32> -> {PH}
      pto.tstore ins(%t : {H}) outs(%q : {PH})
    }}""", extra_consts="    %c32 = arith.constant 32 : index")
    return text.replace("%arg2: !pto.ptr<f32>)", "%arg2: !pto.ptr<f32>, %flag: i1)")


@pytest.mark.parametrize("flag", [True, False])
def test_a_name_defined_in_both_branches_is_each_branch_own_value(flag):
    x = np.arange(16 * 64, dtype=np.float32).reshape(16, 64) / 7
    out = np.full((16, 64), -1, np.float32)
    r = pyptoemu.run(_two_branch_kernel(), inputs={"arg0": x, "arg1": x, "arg2": out}, args={"arg3": flag},
                     sync="asis")
    got = r.outputs["arg2"].reshape(16, 64)
    want = out.copy()
    if flag:
        want = x + x
    else:
        want[:, :32] = x[:, :32] * x[:, :32]
    np.testing.assert_allclose(got, want, rtol=1e-6)


def _kernel(body: str) -> str:
    return binary_kernel(body).replace("%arg2: !pto.ptr<f32>)", "%arg2: !pto.ptr<f32>, %flag: i1)")


def _line_of(text: str, fragment: str) -> int:
    return next(i for i, ln in enumerate(text.splitlines(), 1) if fragment in ln)


BAD = {
    "a sibling branch's name": ("""
    scf.if %flag {
      %q = arith.constant 3 : index
    } else {
      %z = arith.addi %q, %c1 : index
    }""", "%z = arith.addi", r"%q is not visible here: it is defined at \d+:\d+ inside a region"),
    "a loop body's name after the loop": ("""
    scf.for %i = %c0 to %cr step %c1 {
      %q = arith.addi %i, %c1 : index
    }
    %z = arith.addi %q, %c1 : index""", "%z = arith.addi", r"%q is not visible here"),
    "a loop's induction variable after the loop": ("""
    scf.for %i = %c0 to %cr step %c1 {
    }
    %z = arith.addi %i, %c1 : index""", "%z = arith.addi", r"%i is not visible here"),
    "a name before its definition": ("""
    %z = arith.addi %q, %c1 : index
    %q = arith.constant 3 : index""", "%z = arith.addi", r"%q is used before its definition at \d+:\d+"),
    "a name defined twice in one region": ("""
    %q = arith.constant 3 : index
    %q = arith.constant 4 : index""", "%q = arith.constant 4", r"%q is defined again \(defined at \d+:\d+\)"),
    "an outer name shadowed in a branch": ("""
    scf.if %flag {
      %c1 = arith.constant 5 : index
    }""", "%c1 = arith.constant 5", r"%c1 is defined again"),
    "an argument shadowed in a loop": ("""
    scf.for %i = %c0 to %cr step %c1 {
      %flag = arith.constant true
    }""", "%flag = arith.constant true", r"%flag is defined again \(an argument of the function\)"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_name_used_or_defined_outside_its_scope_is_located(case):
    body, culprit, message = BAD[case]
    text = _kernel(body)
    with pytest.raises(ModuleVerifyError) as info:
        pyptoemu.run(text, args={"arg3": 1}, data=False)
    line = _line_of(text, culprit)
    assert any(e.loc.line == line and re.search(message, e.message) for e in info.value.errors), \
        str(info.value)
