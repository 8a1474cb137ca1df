"""Differential test: random PyPTO programs compiled to .pto, run on the emulator, compared with NumPy.

Hypothesis draws plans (tests/compiler/differential/program_plans.py): tile kernels over ragged shapes with
elementwise, tile-scalar and broadcasting ops, cast round trips, aliases, nested if/else on a scalar
argument and loops, then a row or column reduction; tensor-level kernels of the same ops with any shape
(the compiler tiles them, broadcasting [R, 1], [1, C] and [C] operands); matmul with any M, K, N. Over
FP32, FP16, BF16 and INT32 (INT32 tensor kernels also divide, over the whole INT32 range half the time).
Every program must compile, run without an error finding and match NumPy within a tolerance that fits
the dtype (one rounding per step; exact, wrapping, for INT32). A program the compiler rejects is a
failure too: every plan is a valid program. One program in ``CPP_EVERY`` also has its C++ read: no
instruction in a form the ISA does not take.

``python tests/compiler/differential/fuzz_offline.py N`` runs N programs outside the suite.
"""

import os

import numpy as np
import program_plans as P  # this directory is on sys.path (a test directory without __init__.py)
from conftest import load_module, needs_emulator
from cpp_forms import illegal_forms
from hypothesis import HealthCheck, given, settings

from pypto.ir.compiler import compile_program
from pypto.runtime import run

pytestmark = needs_emulator
EXAMPLES = int(os.environ.get("PYPTO_DIFF_EXAMPLES", "400"))
CPP_EVERY = 8  # one program in this many also has its C++ read (tests/compiler/cpp_forms.py)


def compile_and_check(plan: P.Plan, workdir: str) -> None:
    """Compile ``plan``'s source, run it and compare with the NumPy reference (raises on mismatch)."""
    src = P.source(plan)
    path = os.path.join(workdir, f"gen_{abs(hash(src)) % 10**12}.py")
    with open(path, "w") as f:
        f.write(src)
    prog = load_module(path).Generated
    ins = P.inputs(plan)
    want, amplification = P.evaluate(plan, ins)
    if plan.seed % CPP_EVERY == 0:  # the C++ of the same program: every instruction in a legal form
        for kernel, text in compile_program(prog).cpp.items():
            assert illegal_forms(text) == [], (kernel, illegal_forms(text), src)
    r = run(prog, *P.arguments(plan, ins))
    assert not r.errors(), (r.errors(), src)
    got = r.outputs[0]
    assert got.shape == want.shape, (got.shape, want.shape, src)
    rtol, atol = P.tolerance(plan, want, amplification)
    if plan.dtype == "INT32" and plan.kind != "matmul":
        np.testing.assert_array_equal(got, want.astype(np.int32), err_msg=src)
    else:
        np.testing.assert_allclose(got.astype(np.float64), want, rtol=rtol, atol=atol, err_msg=src)


@needs_emulator
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                        HealthCheck.function_scoped_fixture])
@given(plan=P.plans())
def test_random_program_matches_numpy(plan, tmp_path_factory):
    compile_and_check(plan, str(tmp_path_factory.getbasetemp()))
