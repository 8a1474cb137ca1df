"""Automatic synchronisation insertion: structure, correctness (race-free, NumPy-equal, no deadlock)
and cost (within 1.10x of the hand-synchronised examples)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import pyptoemu
from ptoisa.machine import load_machine
from ptoisa.text import ast as A
from ptoisa.text.parser import parse_file, parse_module
from ptoisa.text.printer import print_module
from pyptoemu.check import autosync
from pyptoemu.errors import InputError
from pyptoemu.isa.runnable import load_isa
from tests.conftest import EXAMPLES, _load_reference

REF = _load_reference()
KERNELS = sorted(REF.INPUTS)
EXPLICIT = [k for k in KERNELS if REF.SYNC[k] == "explicit"]
MACHINE = load_machine("a2a3")
ISA = load_isa(machine=MACHINE)


def synced(name: str) -> A.Module:
    return autosync.insert_sync(autosync.strip_sync(parse_file(str(EXAMPLES / name))), ISA, MACHINE)


def _walk(region: A.Region):
    for op in region.ops:
        yield op
        for r in op.regions:
            yield from _walk(r)


def _flag(op: A.Op) -> tuple[str, str, str]:
    a = op.attrs["args"]
    return (a[0].value, a[1].value, a[2].value)


def flag_errors(fn: A.Function) -> list[str]:
    """Every way the flags of ``fn`` can go wrong on some path: a set while already set, a wait
    with nothing set (deadlock), a flag still set at the end. Abstract execution over the sets of
    flags that may be set; loops run to a fixpoint (zero trips included), both if arms."""
    errors: list[str] = []

    def region(r: A.Region, states: set[frozenset]) -> set[frozenset]:
        for op in r.ops:
            if op.name in ("pto.set_flag", "pto.wait_flag"):
                key = _flag(op)
                out = set()
                for s in states:
                    if op.name == "pto.set_flag":
                        if key in s:
                            errors.append(f"double set {key} at line {op.loc.line}")
                        out.add(s | {key})
                    else:
                        if key not in s:
                            errors.append(f"wait without set {key} at line {op.loc.line}")
                        out.add(s - {key})
                states = out
            elif op.name == "scf.for":
                acc, cur = set(states), set(states)
                for _ in range(8):
                    cur = region(op.regions[0], cur)
                    if cur <= acc:
                        break
                    acc |= cur
                states = acc
            elif op.name == "scf.if":
                arms = [region(x, set(states)) for x in op.regions]
                states = set().union(*arms) | (states if len(op.regions) < 2 else set())
            else:
                for x in op.regions:
                    states = region(x, states)
        return states

    end = region(fn.body, {frozenset()})
    errors += [f"left set at the end: {sorted(s)}" for s in end if s]
    return sorted(set(errors))


def run_checked(module: A.Module, name: str, seed: int = 3):
    """Run an already-synced module as written (so the race detector judges our flags) and compare
    with NumPy."""
    inputs = REF.make_inputs(name, seed=seed)
    args = REF.ARGS.get(name, {})
    res = pyptoemu.run(module, inputs=inputs, args=args, sync="asis", races="warn")
    exp = REF.expected(name, inputs, args)
    rtol, atol = REF.TOLERANCES[name]
    for key, want in exp.items():
        np.testing.assert_allclose(res.outputs[key].reshape(want.shape), want, rtol=rtol, atol=atol,
                                   err_msg=f"{name}:{key}")
    races = [str(f) for f in res.findings if f.kind == "race"]
    assert not races, races
    return res


# ------------------------------------------------------------------------------------ structure


@pytest.mark.parametrize("name", KERNELS)
def test_output_is_balanced_and_parses(name):
    module = synced(name)
    text = print_module(module)
    again = parse_module(text, name)
    assert print_module(again) == text  # the printer round-trips the inserted ops
    for fn in again.functions:
        assert flag_errors(fn) == []
        for op in _walk(fn.body):
            if op.name in ("pto.set_flag", "pto.wait_flag"):
                src, dst, ev = _flag(op)
                assert src != dst and int(ev.removeprefix("EVENT_ID")) < MACHINE.event_ids


def test_input_module_not_mutated():
    module = parse_file(str(EXAMPLES / "double_buffer_1024.pto"))
    before = print_module(module)
    fn = module.functions[0]
    new, new_fn, mode, _ = autosync.prepare(module, fn, "auto", ISA, MACHINE)
    assert mode == "auto" and new is not module and new_fn is new.function(fn.name)
    assert print_module(module) == before
    assert print_module(new) != before


def test_default_mode():
    nosync = parse_file(str(EXAMPLES / "vadd_nosync.pto"))
    _, _, mode, notices = autosync.prepare(nosync, nosync.functions[0], None, ISA, MACHINE)
    assert mode == "auto" and len(notices) == 1 and "no sync ops" in notices[0]
    hand = parse_file(str(EXAMPLES / "vadd_32x32.pto"))
    new, fn, mode, notices = autosync.prepare(hand, hand.functions[0], None, ISA, MACHINE)
    assert (new, fn, mode, notices) == (hand, hand.functions[0], "asis", [])


def test_strip_removes_intra_core_sync_only():
    stripped = autosync.strip_sync(parse_file(str(EXAMPLES / "matmul_splitk.pto")))
    assert not autosync.has_sync(stripped)


def test_hand_patterns_reproduced():
    """The double-buffered kernel gets exactly the hand-written structure: one MTE3->MTE2 flag per
    buffer kept across the loop nest (pre-set before, consumed after), no sync between buffers."""
    fn = synced("double_buffer_1024.pto").functions[0]
    top = [op for op in fn.body.ops if op.name in ("pto.set_flag", "pto.wait_flag")]
    assert [(op.name, _flag(op)[:2]) for op in top] == [
        ("pto.set_flag", ("PIPE_MTE3", "PIPE_MTE2"))] * 2 + [("pto.wait_flag", ("PIPE_MTE3", "PIPE_MTE2"))] * 2
    inner = [op for op in _walk(fn.body) if op.name == "scf.for"][1]
    names = [op.name for op in inner.regions[0].ops]
    assert names.count("pto.barrier") == 2 and names.count("pto.set_flag") == 6


# ------------------------------------------------------------------------------------ running


@pytest.mark.parametrize("name", KERNELS)
def test_auto_synced_examples_are_race_free_and_correct(name):
    run_checked(synced(name), name)


@pytest.mark.parametrize("name", EXPLICIT)
def test_not_over_synchronised(name):
    """Hand sync stripped and re-inserted: within 1.10x of the hand-synchronised simulated time."""
    inputs = REF.make_inputs(name, seed=1)
    args = REF.ARGS.get(name, {})
    hand = pyptoemu.run(EXAMPLES / name, inputs=inputs, args=args, sync="asis")
    auto = pyptoemu.run(EXAMPLES / name, inputs=inputs, args=args, sync="auto")
    assert auto.sync_mode == "auto"
    for key in hand.outputs:
        np.testing.assert_array_equal(auto.outputs[key], hand.outputs[key])
    assert auto.cycles <= 1.10 * hand.cycles, (name, auto.cycles, hand.cycles)


def test_double_buffering_survives_insertion():
    """Serialising the ping/pong loop would cost far more than 10%: the auto-synced double-buffered
    kernel stays much faster than the (auto-synced) single-buffered one."""
    db = run_checked(synced("double_buffer_1024.pto"), "double_buffer_1024.pto")
    sb = run_checked(synced("single_buffer_1024.pto"), "single_buffer_1024.pto")
    assert db.cycles < 0.8 * sb.cycles, (db.cycles, sb.cycles)


def test_matmul_both_arms():
    module = synced("matmul_splitk.pto")
    inputs = REF.make_inputs("matmul_splitk.pto", seed=2)
    res = pyptoemu.run(module, inputs=inputs, args={"arg4": False}, sync="asis", races="warn")
    exp = REF.expected("matmul_splitk.pto", inputs, {"arg4": False})
    np.testing.assert_allclose(res.outputs["arg3"], exp["arg3"], rtol=1e-3, atol=1e-3)
    assert not [f for f in res.findings if f.kind == "race"]


# ------------------------------------------------------------------------------------ errors

TB = ("!pto.tile_buf<loc=vec, dtype=f32, rows=8, cols=64, v_row=8, v_col=64, blayout=row_major, "
      "slayout=none_box, fractal=512, pad=0>")


def _many_buffers_kernel(n: int) -> str:
    """A loop that loads n tiles and scales each: every tile's next load must wait for its scale in
    the previous iteration, so n loop-carried V -> MTE2 flags are live at once."""
    lines = [
        "func.func @k(%a: !pto.ptr<f32>, %b: !pto.ptr<f32>) attributes {pto.kernel_kind = #pto.kernel_kind<vector>} {",
        "  %c0 = arith.constant 0 : index", "  %c1 = arith.constant 1 : index",
        "  %c4 = arith.constant 4 : index", "  %c8 = arith.constant 8 : index",
        "  %c64 = arith.constant 64 : index", "  %s = arith.constant 2.0 : f32",
        "  %va = pto.make_tensor_view %a, shape = [%c8, %c64], strides = [%c64, %c1] : !pto.tensor_view<?x?xf32>",
        "  %vb = pto.make_tensor_view %b, shape = [%c8, %c64], strides = [%c64, %c1] : !pto.tensor_view<?x?xf32>",
        ("  %pa = pto.partition_view %va, offsets = [%c0, %c0], sizes = [%c8, %c64] : !pto.tensor_view<?x?xf32> "
        "-> !pto.partition_tensor_view<8x64xf32>"),
        ("  %pb = pto.partition_view %vb, offsets = [%c0, %c0], sizes = [%c8, %c64] : !pto.tensor_view<?x?xf32> "
        "-> !pto.partition_tensor_view<8x64xf32>"),
    ]
    lines += [f"  %t{k} = pto.alloc_tile : {TB}" for k in range(n)]
    lines += [f"  %o = pto.alloc_tile : {TB}", "  scf.for %i = %c0 to %c4 step %c1 {"]
    lines += [f"    pto.tload ins(%pa : !pto.partition_tensor_view<8x64xf32>) outs(%t{k} : {TB})" for k in range(n)]
    lines += [f"    pto.tmuls ins(%t{k}, %s : {TB}, f32) outs(%o : {TB})" for k in range(n)]
    lines += ["  }", f"  pto.tstore ins(%o : {TB}) outs(%pb : !pto.partition_tensor_view<8x64xf32>)",
              "  return", "}"]
    return "\n".join(lines) + "\n"


def test_event_ids_reused_up_to_the_limit():
    module = autosync.insert_sync(parse_module(_many_buffers_kernel(8), "k8.pto"), ISA, MACHINE)
    assert flag_errors(module.functions[0]) == []
    ids = {_flag(op) for op in _walk(module.functions[0].body) if op.name == "pto.set_flag"}
    assert {i for s, d, i in ids if (s, d) == ("PIPE_V", "PIPE_MTE2")} == {f"EVENT_ID{k}" for k in range(8)}
    res = pyptoemu.run(module, sync="asis", races="warn")
    assert not [f for f in res.findings if f.kind == "race"]


def test_too_many_event_ids_is_an_input_error():
    with pytest.raises(InputError, match="more than 8 event ids") as err:
        autosync.insert_sync(parse_module(_many_buffers_kernel(9), "k9.pto"), ISA, MACHINE)
    assert err.value.loc is not None and err.value.loc.file == "k9.pto"


def test_tassign_refused():
    text = _many_buffers_kernel(1).replace(
        "  %o = pto.alloc_tile", f"  %addr = arith.constant 0 : i64\n  %t0b = pto.tassign %t0, %addr : {TB} -> {TB}\n"
        "  %o = pto.alloc_tile").replace("outs(%t0 :", "outs(%t0b :")
    with pytest.raises(InputError, match="tassign"):
        autosync.insert_sync(parse_module(text, "ta.pto"), ISA, MACHINE)


# ------------------------------------------------------------------------------------ control flow


def _if_call_kernel() -> str:
    pv = "!pto.partition_tensor_view<8x64xf32>"
    return "\n".join([
        "module {",
        f"func.func private @scale(%t: {TB}, %o: {TB}) {{",
        "  %s = arith.constant 3.0 : f32",
        f"  pto.tmuls ins(%t, %s : {TB}, f32) outs(%o : {TB})",
        f"  pto.tadds ins(%o, %s : {TB}, f32) outs(%o : {TB})",
        "  return", "}",
        "func.func @k(%a: !pto.ptr<f32>, %b: !pto.ptr<f32>, %p: i1) attributes {pto.entry} {",
        "  %c0 = arith.constant 0 : index", "  %c1 = arith.constant 1 : index",
        "  %c8 = arith.constant 8 : index", "  %c64 = arith.constant 64 : index",
        "  %s = arith.constant 2.0 : f32",
        "  %va = pto.make_tensor_view %a, shape = [%c8, %c64], strides = [%c64, %c1] : !pto.tensor_view<?x?xf32>",
        "  %vb = pto.make_tensor_view %b, shape = [%c8, %c64], strides = [%c64, %c1] : !pto.tensor_view<?x?xf32>",
        f"  %pa = pto.partition_view %va, offsets = [%c0, %c0], sizes = [%c8, %c64] : !pto.tensor_view<?x?xf32> -> {pv}",
        f"  %pb = pto.partition_view %vb, offsets = [%c0, %c0], sizes = [%c8, %c64] : !pto.tensor_view<?x?xf32> -> {pv}",
        f"  %x = pto.alloc_tile : {TB}", f"  %y = pto.alloc_tile : {TB}",
        f"  pto.tload ins(%pa : {pv}) outs(%x : {TB})",
        "  scf.if %p {",
        f"    pto.tmuls ins(%x, %s : {TB}, f32) outs(%y : {TB})",
        "  } else {",
        f"    func.call @scale(%x, %y) : ({TB}, {TB}) -> ()",
        "  }",
        f"  pto.tstore ins(%y : {TB}) outs(%pb : {pv})",
        "  return", "}", "}",
    ]) + "\n"


@pytest.mark.parametrize("flag", [True, False])
def test_if_arms_and_calls(flag):
    module = autosync.insert_sync(parse_module(_if_call_kernel(), "ifcall.pto"), ISA, MACHINE)
    for fn in module.functions:
        assert flag_errors(fn) == []
    x = np.random.default_rng(0).uniform(-1, 1, (8, 64)).astype(np.float32)
    res = pyptoemu.run(module, inputs={"arg0": x}, args={"arg2": flag}, sync="asis", races="warn")
    want = x * np.float32(2.0) if flag else x * np.float32(3.0) + np.float32(3.0)
    np.testing.assert_allclose(res.outputs["arg1"].reshape(8, 64), want, rtol=1e-6)
    assert not [f for f in res.findings if f.kind == "race"]


# ------------------------------------------------------------------------------------ CLI


def test_cli_sync_writes_parseable_file(tmp_path):
    out = tmp_path / "softmax_auto.pto"
    proc = subprocess.run([sys.executable, "-m", "pyptoemu.cli", "sync", str(EXAMPLES / "softmax_nosync.pto"),
                           "-o", str(out)], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "set/wait pairs" in proc.stdout
    module = parse_file(str(out))
    assert autosync.has_sync(module) and flag_errors(module.functions[0]) == []
    run_checked(module, "softmax_nosync.pto")
