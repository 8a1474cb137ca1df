"""A lowering kept per module, ISA and machine (binding.lowering_of, control.PREPARED_LOWERINGS)
binds each core and run as binding the op from scratch does: the same value, on its own scalar
unit, and the same error where binding fails."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pyptoemu
from ptoisa.text import ast as A
from pyptoemu import api
from pyptoemu.core import control, coreops
from pyptoemu.core.aicore import AICore
from pyptoemu.core.binding import lowering_of
from pyptoemu.core.memory import GMBuffer, Ptr, TensorView
from pyptoemu.errors import Loc, PtoError

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
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


# -- flag, partition_view and arith ops: what binding decides from the op alone is kept per op

PIPE_NAMES = ["PIPE_MTE2", "PIPE_MTE3", "PIPE_V", "PIPE_S", "PIPE_ALL", "PIPE_M"]
FLAG_OPS = ["pto.set_flag", "pto.wait_flag", "pto.record_event", "pto.wait_event", "pto.set_flag_dyn",
            "pto.wait_flag_dyn"]


def _flag_op(name: str, args: list, dyn: bool) -> A.Op:
    return A.Op(name=name, loc=Loc("k.pto", 7, 3), operands=["%e"] if dyn else [],
                attrs={"args": [A.EnumAttr("event" if a.startswith("EVENT") else "pipe", a) for a in args]})


def _bound_on(core: AICore, lowering, op: A.Op):
    """The step ``lowering`` (or the error it stands for) gives on ``core``, run once: (error text or
    None, what the core's pipes and flag records hold after it)."""
    su = core.scalar
    try:
        step = control.fail_step(lowering) if isinstance(lowering, Exception) else lowering(su, op)
        gen = step({"%e": 1})
        if gen is not None:
            for _ in gen:  # (a flag on the scalar unit waits in SimPy time: not run here)
                break
    except PtoError as e:
        return str(e), None
    queued = {n: [(i.kind, i.name, i.flag, i.iseq) for i in p.queue] for n, p in core.pipes.items()}
    orders = {f: (o.balance, o.core is core, o.last is not None) for f, o in su.flag_orders.items()}
    return None, (queued, orders, su.issued_total)


@settings(derandomize=True, deadline=None, max_examples=200)
@given(name=st.sampled_from(FLAG_OPS), src=st.sampled_from(PIPE_NAMES), dst=st.sampled_from(PIPE_NAMES),
       eid=st.one_of(st.none(), st.sampled_from(["EVENT_ID0", "EVENT_ID3", "EVENT_ID7", "EVENT_ID9"])),
       dyn=st.booleans())
def test_a_kept_flag_lowering_binds_each_core_as_a_fresh_binding(name, src, dst, eid, dyn):
    """A flag op's lowering kept per module, ISA and machine (coreops.prepare_flag) binds every core
    as binding the op from scratch on that core does (coreops.lower_flag): the same error where
    binding fails, else a step that issues the same instruction to that core's own pipe and counts
    it in that core's own flag record."""
    mach, isa = api._machine_and_isa("a2a3")
    op = _flag_op(name, [src, dst] + ([eid] if eid else []), dyn)
    try:
        kept = lowering_of(op, isa, mach)
    except PtoError as e:
        with pytest.raises(PtoError) as fresh:
            coreops.lower_flag(AICore(_MODULE, isa, mach).scalar, op)
        assert str(fresh.value) == str(e)
        return
    for _ in range(2):  # each core in turn, as a later run's would
        core, fresh_core = AICore(_MODULE, isa, mach), AICore(_MODULE, isa, mach)
        assert _bound_on(core, kept, op) == _bound_on(fresh_core, lambda su, op: coreops.lower_flag(su, op), op)


def test_kept_lowerings_of_a_loop_body_bind_each_core_alone():
    """The steps a kept partition_view, arith and flag lowering make on two cores hold each core's
    own state: a window moved on one core, a flag set on one, leaves the other as it was."""
    module = api.load_kernel(EXAMPLES / "double_buffer_1024.pto")
    mach, isa = api._machine_and_isa("a2a3")
    body = module.functions[0].body.ops
    loop = next(op for op in body if op.name == "scf.for").regions[0].ops[0].regions[0].ops
    view = next(op for op in loop if op.name == "pto.partition_view")
    add = next(op for op in loop if op.name == "arith.addi")
    setter = next(op for op in loop if op.name == "pto.set_flag")
    cores = [AICore(module, isa, mach) for _ in range(2)]
    frames = []
    for core in cores:
        frame = {"%vin": _tensor_view(), "%row": 0, "%col": 0, "%col1": 64, "%c64": 64}
        for op in (view, add, setter):
            lowering_of(op, isa, mach)(core.scalar, op)(frame)
        frames.append(frame)
    assert frames[0]["%pin0"] is not frames[1]["%pin0"]
    assert frames[0]["%col1"] == frames[1]["%col1"] == 64
    for core in cores:
        assert [f for f, o in core.scalar.flag_orders.items() if o.balance == 1 and o.core is core] == \
            [("MTE2", "V", 0)]
        assert core.scalar.issued_total == 1 and core.scalar.own_count == 2


def _tensor_view() -> TensorView:
    gm = GMBuffer(0, "f32", np.dtype(np.float32), size=1024 * 1024)
    return TensorView(Ptr(gm, 0), (1024, 1024), (1024, 1))


def test_two_texts_run_in_turn_give_what_each_gives_alone(tmp_path):
    """Runs of two texts interleaved (each keeps its lowerings, binding.SharedBinds) give each what
    a fresh module gives: the same cycles, bound, findings and statistics."""
    def outcome(kernel) -> tuple:
        r = pyptoemu.run(kernel, races="warn", data=False)
        return r.cycles, r.bound, [str(f) for f in r.findings], r.to_json()["pipes"]

    kernels = []
    for name in ("double_buffer_1024.pto", "softmax_rows_64x128.pto"):
        (tmp_path / name).write_text((EXAMPLES / name).read_text())
        kernels.append(tmp_path / name)
    alone = [outcome(api.load_kernel(k)) for k in kernels]
    for _ in range(2):
        assert [outcome(k) for k in kernels] == alone
    assert alone[0] != alone[1]


@settings(derandomize=True, deadline=None, max_examples=100)
@given(sets=st.lists(st.booleans(), min_size=1, max_size=12))
def test_a_static_flag_step_notes_its_flag_order_as_a_dynamic_one(sets):
    """A static set_flag step notes its set with FlagOrder.on_set written inline; a dynamic one
    (the same flag, its id an operand) calls FlagOrder.on_set / note_flag_order. Any sequence of
    sets and waits leaves the same balance and last set, and the same double-set findings."""
    mach, isa = api._machine_and_isa("a2a3")
    seen = []
    for dyn in (False, True):
        core = AICore(_MODULE, isa, mach)
        su = core.scalar
        steps = {}
        for is_set in (False, True):
            op = _flag_op(f"pto.{'set' if is_set else 'wait'}_flag{'_dyn' if dyn else ''}",
                          ["PIPE_MTE2", "PIPE_V"] + ([] if dyn else ["EVENT_ID1"]), dyn)
            steps[is_set] = lowering_of(op, isa, mach)(su, op)
        for is_set in sets:
            steps[is_set]({"%e": 1})
        order = su.flag_orders[("MTE2", "V", 1)]
        seen.append((order.balance, order.last.iseq if order.last is not None else None,
                     [(f.kind, f.message) for f in core.findings.items]))
    assert seen[0] == seen[1]
