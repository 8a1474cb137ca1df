"""A lowering kept per module, ISA and machine (binding.lowering_of, control.PREPARED_LOWERINGS)
binds each core and run as binding the op from scratch does: the same value, on its own scalar
unit, and the same error where binding fails."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ptoisa.text import ast as A
from pyptoemu import api
from pyptoemu.core import control
from pyptoemu.core.aicore import AICore
from pyptoemu.core.binding import lowering_of
from pyptoemu.errors import Loc, PtoError

TYPES = ["i1", "i8", "i16", "i32", "i64", "ui8", "ui16", "index", "f16", "bf16", "f32", "f64", "c64"]
LITERALS = st.one_of(st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=True, allow_infinity=True),
                     st.sampled_from([0, 1, -1, 127, 128, 255, 256, 65504.0, 65520.0, 1.5, -0.0, 2**63, 2**64]))


_MODULE = A.Module(file="k.pto", functions=[])


def _constant(value, tname: str) -> A.Op:
    return A.Op(name="arith.constant", loc=Loc("k.pto", 3, 5), results=["%c"],
                result_types=[A.ScalarType(tname)], attrs={"value": value})


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    return type(a) is type(b) and a == b


@settings(derandomize=True, deadline=None, max_examples=300)
@given(value=LITERALS, tname=st.sampled_from(TYPES))
def test_a_kept_constant_lowering_binds_each_core_as_a_fresh_binding(value, tname):
    mach, isa = api._machine_and_isa("a2a3")
    op = _constant(value, tname)
    try:  # the straightforward formulation: the literal checked and converted at each binding
        want, want_error = control._constant_value(value, tname, op), None
    except PtoError as e:
        want, want_error = None, str(e)
    try:
        lowering = lowering_of(op, isa, mach)
    except PtoError as e:
        assert str(e) == want_error
        return
    assert want_error is None
    cores = [AICore(_MODULE, isa, mach) for _ in range(2)]
    for core in cores:
        frame: dict = {}
        assert lowering(core.scalar, op)(frame) is None
        assert _same(frame["%c"], want)
        assert core.scalar.vclock == core.scalar.arith_cost  # charged to its own scalar unit only


def test_a_dense_constant_is_a_new_array_at_each_binding():
    mach, isa = api._machine_and_isa("a2a3")
    op = A.Op(name="arith.constant", loc=Loc("k.pto", 3, 5), results=["%c"], attrs={"value": A.DenseAttr((1, 2))})
    lowering = lowering_of(op, isa, mach)
    frames = [{}, {}]
    for frame in frames:
        lowering(AICore(_MODULE, isa, mach).scalar, op)(frame)
    assert list(frames[0]["%c"]) == [1, 2] and frames[0]["%c"] is not frames[1]["%c"]


def test_a_constant_of_an_unsupported_value_fails_where_it_runs():
    mach, isa = api._machine_and_isa("a2a3")
    op = _constant("text", "i32")
    step = lowering_of(op, isa, mach)(AICore(_MODULE, isa, mach).scalar, op)
    with pytest.raises(PtoError, match="arith.constant with unsupported value 'text'"):
        step({})
