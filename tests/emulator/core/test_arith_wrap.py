"""arith.unwrapped: the integers wrap leaves as they are, which the integer scalar steps do not wrap."""

from hypothesis import given, settings
from hypothesis import strategies as st

from pyptoemu.core import arith

TYPES = sorted(arith.INT_BITS) + ["an_unknown_type"]  # (wrap takes an unknown type as 64 bits)


@settings(derandomize=True, deadline=None, max_examples=400)
@given(st.sampled_from(TYPES), st.integers(min_value=-(1 << 70), max_value=1 << 70))
def test_unwrapped_is_exactly_where_wrap_is_the_identity(tname: str, value: int) -> None:
    low, high = arith.unwrapped(tname)
    assert (arith.wrap(value, tname) == value) == (low <= value <= high)


def test_unwrapped_bounds_are_the_type_range() -> None:
    for tname in TYPES:
        low, high = arith.unwrapped(tname)
        for v in (low, high):
            assert arith.wrap(v, tname) == v
        for v in (low - 1, high + 1):
            assert arith.wrap(v, tname) != v


INT_OPS = sorted(arith.INT_BINARY)
INT_TYPES = sorted(arith.INT_BITS)


@settings(derandomize=True, deadline=None, max_examples=400)
@given(st.sampled_from(INT_OPS), st.sampled_from(INT_TYPES), st.integers(-(1 << 66), 1 << 66),
       st.integers(-(1 << 66), 1 << 66), st.booleans())
def test_an_integer_step_gives_the_wrapped_result(kind: str, tname: str, a: int, b: int, literal_b: bool) -> None:
    """The step of an integer op (control._lower_int_binary, which wraps only outside
    ``unwrapped``) against the straightforward formulation: ``wrap(fn(a, b))`` always, the same
    fault where that one raises, and the scalar unit charged once."""
    from ptoisa.text import ast as A
    from pyptoemu import api
    from pyptoemu.core.aicore import AICore
    from pyptoemu.core.binding import lowering_of
    from pyptoemu.errors import KernelFault, Loc

    mach, isa = api._machine_and_isa("a2a3")
    op = A.Op(name=f"arith.{kind}", loc=Loc("k.pto", 3, 5), results=["%r"], result_types=[A.ScalarType(tname)],
              operands=["%a", b if literal_b else "%b"], operand_types=[A.ScalarType(tname)] * 2)
    core = AICore(A.Module(file="k.pto", functions=[]), isa, mach)
    step = lowering_of(op, isa, mach)(core.scalar, op)
    try:
        want = arith.wrap(arith.INT_BINARY[kind](a, b, tname), tname)
        want = bool(want) if tname == "i1" else want
    except (ZeroDivisionError, arith.UndefinedIntegerResult):
        want = KernelFault
    frame = {"%a": a, "%b": b}
    before = core.scalar.vclock, core.scalar.own_count
    try:
        step(frame)
        got = frame["%r"]
    except KernelFault:
        got = KernelFault
    assert got == want and type(got) is type(want)
    if got is not KernelFault:
        assert (core.scalar.vclock - before[0], core.scalar.own_count - before[1]) == (core.scalar.arith_cost, 1)
