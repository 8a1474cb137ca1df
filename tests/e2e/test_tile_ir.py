"""The tile-level form end to end: generated programs (sequential and async) against NumPy, the
command line (`run` recognises the form, `lower`, `--dump-passes`), and the compiler's emission
(every example program: tile-level form lowered and run == the direct `.pto` path)."""

from __future__ import annotations

import runpy
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pyptoemu
from ptoisa.isa.loader import load_isa
from ptoisa.machine import load_machine
from ptoisa.text import ast as A
from ptoisa.text.parser import parse_file, parse_module
from ptoisa.text.printer import print_module
from ptoisa.tile.passes.canonicalize import Canonicalize
from ptoisa.tile.passes.common import PassContext
from ptoisa.tile.passes.events import InsertEvents
from ptoisa.tile.passes.tile_info import InferTileInfo
from ptoisa.tile.passes.views import CanonicalizeViews
from pyptoemu.cli import main

ROWS, COLS = 16, 32
T = f"tile<{ROWS}x{COLS}xf32>"
M = f"pto.memref<{ROWS}x{COLS}xf32>"
BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "max": np.maximum, "min": np.minimum}
UNARY = {"abs": np.abs, "neg": np.negative, "exp": np.exp}
SCALAR = {"adds": np.add, "muls": np.multiply, "maxs": np.maximum}


@st.composite
def programs(draw):
    """(tile-level text, inputs, expected outputs): loads of 1-3 inputs, 1-7 vector ops on any
    earlier tiles, stores of 1-2 of the results."""
    n_in = draw(st.integers(1, 3))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    inputs = [rng.uniform(-2, 2, (ROWS, COLS)).astype(np.float32) for _ in range(n_in)]
    lines = ["%c0 = pto.constant 0 : index"]
    values: list[np.ndarray] = []
    for i in range(n_in):
        lines.append(f"%t{i} = pto.tile.load %in{i}[%c0, %c0] : {M}, {T}")
        values.append(inputs[i])
    for k in range(draw(st.integers(1, 7))):
        kind = draw(st.sampled_from(["binary", "unary", "scalar", "rowexpand"]))
        a = draw(st.integers(0, len(values) - 1))
        name = f"%t{len(values)}"
        if kind == "binary":
            op = draw(st.sampled_from(sorted(BINARY)))
            b = draw(st.integers(0, len(values) - 1))
            lines.append(f"{name} = pto.tile.{op} %t{a}, %t{b} : {T}")
            values.append(BINARY[op](values[a], values[b]))
        elif kind == "unary":
            op = draw(st.sampled_from(sorted(UNARY)))
            src = np.clip(values[a], -8, 8) if op == "exp" else values[a]
            if op == "exp":  # keep exp's input small: clip it first with maxs/mins
                lines.append(f"%lo{k} = pto.constant -8.0 : f32")
                lines.append(f"%hi{k} = pto.constant 8.0 : f32")
                lines.append(f"%cl{k} = pto.tile.maxs %t{a}, %lo{k} : {T}, f32 -> {T}")
                lines.append(f"%ch{k} = pto.tile.mins %cl{k}, %hi{k} : {T}, f32 -> {T}")
                lines.append(f"{name} = pto.tile.exp %ch{k} : {T}")
            else:
                lines.append(f"{name} = pto.tile.{op} %t{a} : {T}")
            values.append(UNARY[op](src))
        elif kind == "scalar":
            op = draw(st.sampled_from(sorted(SCALAR)))
            s = draw(st.sampled_from([-1.5, 0.5, 2.0]))
            lines.append(f"%s{k} = pto.constant {s} : f32")
            lines.append(f"{name} = pto.tile.{op} %t{a}, %s{k} : {T}, f32 -> {T}")
            values.append(SCALAR[op](values[a], np.float32(s)))
        else:
            lines.append(f"%r{k} = pto.tile.rowmax %t{a} : {T} -> tile<{ROWS}x1xf32>")
            lines.append(f"{name} = pto.tile.rowexpandsub %t{a}, %r{k} : {T}, tile<{ROWS}x1xf32> -> {T}")
            values.append(values[a] - values[a].max(1, keepdims=True))
    outs = draw(st.lists(st.integers(n_in, len(values) - 1), min_size=1, max_size=2, unique=True)) \
        if len(values) > n_in else [0]
    for j, v in enumerate(outs):
        lines.append(f"pto.tile.store %t{v}, %out{j}[%c0, %c0] : {M}, {T}")
    args = [f"%in{i}: {M}" for i in range(n_in)] + [f"%out{j}: {M}" for j in range(len(outs))]
    text = (f"module attributes {{pto.target = #pto.target<a3>}} {{\nfunc.func @k({', '.join(args)}) {{\n"
            + "\n".join(lines) + "\nreturn\n}\n}\n")
    feeds = {f"arg{i}": x for i, x in enumerate(inputs)}
    expected = {f"arg{n_in + j}": values[v] for j, v in enumerate(outs)}
    return text, feeds, expected


def _check(text: str, feeds, expected) -> None:
    r = pyptoemu.run(text, inputs=feeds)
    assert r.findings == [], (text, r.findings)
    for name, want in expected.items():
        np.testing.assert_allclose(r.outputs[name], want, rtol=1e-5, atol=1e-6, err_msg=text)


@settings(max_examples=25)
@given(programs())
def test_generated_sequential_programs_match_numpy(case):
    _check(*case)


def _async_form(text: str) -> str:
    """The program with its tokens written out (what insert-events derives), as text a user writes."""
    mach = load_machine()
    ctx = PassContext(load_isa(machine=mach), mach)
    module = parse_module(text)
    for p in (Canonicalize(), CanonicalizeViews(), InferTileInfo(), InsertEvents()):
        p.apply(module, ctx)
    return print_module(module)


@settings(max_examples=25)
@given(programs())
def test_generated_async_programs_match_numpy(case):
    text, feeds, expected = case
    async_text = _async_form(text)
    _check(async_text, feeds, expected)


@settings(max_examples=10)
@given(programs(), st.data())
def test_dropping_a_token_from_a_generated_async_program_is_reported(case, data):
    """Drop a token of the first op that waits: the race detector must name the hazard it ordered."""
    text, feeds, _ = case
    module = parse_module(_async_form(text))
    waiting = [op for op in module.functions[0].body.ops if op.groups.get("wait")]
    if not waiting:
        return
    op = waiting[0]  # no earlier wait can order what the dropped token did (tokens are minimal)
    op.groups["wait"].pop(data.draw(st.integers(0, len(op.groups["wait"]) - 1)))
    if not op.groups["wait"]:
        del op.groups["wait"]
    r = pyptoemu.run(print_module(module), inputs=feeds, races="warn")
    assert any(f.kind == "race" for f in r.findings), print_module(module)


VADD = f"""module attributes {{pto.target = #pto.target<a3>}} {{
  func.func @vadd(%x: {M}, %y: {M}, %z: {M}) {{
    %c0 = pto.constant 0 : index
    %a = pto.tile.load %x[%c0, %c0] : {M}, {T}
    %b = pto.tile.load %y[%c0, %c0] : {M}, {T}
    %s = pto.tile.add %a, %b : {T}
    pto.tile.store %s, %z[%c0, %c0] : {M}, {T}
    return
  }}
}}
"""


def test_cli_runs_lowers_and_dumps_the_tile_level_form(tmp_path, capsys):
    src = tmp_path / "vadd.pto"
    src.write_text(VADD)
    x = np.arange(ROWS * COLS, dtype=np.float32).reshape(ROWS, COLS)
    np.save(tmp_path / "x.npy", x)
    assert main(["run", str(src), "--input", f"arg0={tmp_path / 'x.npy'}", "--input", f"arg1={tmp_path / 'x.npy'}",
                 "--output-dir", str(tmp_path / "out"), "--dump-passes", str(tmp_path / "dump")]) == 0
    out = capsys.readouterr().out
    assert "sync asis" in out and "findings   none" in out
    np.testing.assert_array_equal(np.load(tmp_path / "out" / "arg2.npy"), 2 * x)
    assert sorted(p.name for p in (tmp_path / "dump").iterdir()) == [
        "00-input.pto", "01-canonicalize.pto", "02-canonicalize-views.pto", "03-infer-tile-info.pto",
        "04-insert-events.pto", "05-bufferize.pto", "06-lower.pto"]
    assert main(["lower", str(src), "-o", str(tmp_path / "low.pto")]) == 0
    lowered = (tmp_path / "low.pto").read_text()
    assert lowered == (tmp_path / "dump" / "06-lower.pto").read_text()
    assert "pto.tile." not in lowered and "pto.set_flag[#pto.pipe<PIPE_MTE2>, #pto.pipe<PIPE_V>" in lowered
    parse_file(tmp_path / "low.pto")  # level-2 text the emulator reads back
    assert main(["run", str(tmp_path / "low.pto"), "--input", f"arg0={tmp_path / 'x.npy'}",
                 "--output-dir", str(tmp_path / "out2")]) == 0
    assert "findings   none" in capsys.readouterr().out


def test_cli_reports_a_bad_tile_program_with_its_location(tmp_path, capsys):
    src = tmp_path / "bad.pto"
    src.write_text(VADD.replace("%s = pto.tile.add %a, %b", "%s = pto.tile.add %a, %q"))
    assert main(["lower", str(src), "-o", str(tmp_path / "o.pto")]) == 2
    assert capsys.readouterr().err.strip() == (
        f"{src}:6:5: error: 'pto.tile.add' op uses %q, which is not defined before it (SSA dominance)")


EXAMPLE_PROGRAMS = sorted(p.stem for p in (Path(__file__).resolve().parents[2] / "examples").glob("*.py")
                          if p.stem != "reference")


def _programs_of(stem: str):
    from pypto.ir.stmt import Program

    path = Path(__file__).resolve().parents[2] / "examples" / f"{stem}.py"
    namespace = runpy.run_path(str(path), run_name="__pypto_compile__")
    return [v for v in namespace.values() if isinstance(v, Program)]


def _scalar_args(text: str) -> dict[str, object]:
    fn = parse_module(text).functions[0]
    return {f"arg{i}": (0.75 if t.name.startswith(("f", "bf")) else 3)
            for i, t in enumerate(fn.arg_types) if isinstance(t, A.ScalarType)}


@pytest.mark.parametrize("stem", EXAMPLE_PROGRAMS)
def test_example_program_emitted_as_tile_ir_runs_like_the_direct_pto_path(stem):
    """Every kernel of every example: compile to level 2 and to the tile-level form, run both on the
    same seeded inputs: the outputs are identical and the tile-level run has no findings."""
    from pypto.codegen.tile_ir import generate_tile_ir
    from pypto.ir.compiler import compile_program

    kernels = 0
    for program in _programs_of(stem):
        compiled = compile_program(program, with_cpp=False)
        tile_ir = generate_tile_ir(compiled.pto)
        for name, level2 in compiled.pto.items():
            assert "pto.tile." in tile_ir[name] and "set_flag" not in tile_ir[name]
            args = _scalar_args(level2)
            direct = pyptoemu.run(level2, seed=5, args=args)
            lowered = pyptoemu.run(tile_ir[name], seed=5, args=args)
            assert lowered.findings == [] and lowered.sync_mode == "asis"
            assert direct.outputs.keys() == lowered.outputs.keys() and direct.outputs
            for key, value in direct.outputs.items():
                np.testing.assert_array_equal(lowered.outputs[key], value, err_msg=f"{stem}:{name}:{key}")
            kernels += 1
    assert kernels


def test_compile_command_emits_tile_ir_that_runs(tmp_path):
    from pyptocli import main as pyptocli_main

    out = tmp_path / "softmax"
    assert pyptocli_main(["compile", str(Path(__file__).resolve().parents[2] / "examples" / "row_softmax.py"),
                          "-o", str(out), "--emit", "tile-ir"]) == 0
    text = (out / "kernels" / "aiv" / "softmax_rows.pto").read_text()
    assert "pto.tile.rowmax" in text and "pto.memref<256x64xf32>" in text
    x = np.random.default_rng(6).standard_normal((256, 64)).astype(np.float32)
    r = pyptoemu.run(out / "kernels" / "aiv" / "softmax_rows.pto", inputs={"arg0": x})
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(r.outputs["arg1"], e / e.sum(1, keepdims=True), rtol=1e-5)


@st.composite
def cube_programs(draw):
    """C = A0 @ B0 (+ A1 @ B1 through matmul.acc) on the cube, shapes from 16/32 multiples."""
    m, k, n = (draw(st.sampled_from([16, 32])) for _ in range(3))
    acc = draw(st.booleans())
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    pairs = 2 if acc else 1
    mats = [(rng.uniform(-1, 1, (m, k)).astype(np.float16), rng.uniform(-1, 1, (k, n)).astype(np.float16))
            for _ in range(pairs)]
    a_t, b_t, c_t = f"tile<{m}x{k}xf16>", f"tile<{k}x{n}xf16>", f"tile<{m}x{n}xf32>"
    lines = ["%c0 = pto.constant 0 : index"]
    args = []
    for i in range(pairs):
        args += [f"%a{i}: pto.memref<{m}x{k}xf16>", f"%b{i}: pto.memref<{k}x{n}xf16>"]
        lines += [f"%am{i} = pto.tile.load %a{i}[%c0, %c0] : pto.memref<{m}x{k}xf16>, {a_t}",
                  f"%bm{i} = pto.tile.load %b{i}[%c0, %c0] : pto.memref<{k}x{n}xf16>, {b_t}",
                  f"%l{i} = pto.tile.mov.m2l %am{i} : {a_t} -> {a_t}",
                  f"%r{i} = pto.tile.mov.m2r %bm{i} : {b_t} -> {b_t}"]
    lines.append(f"%c = pto.tile.matmul %l0, %r0 : {a_t}, {b_t} -> {c_t}")
    out = "%c"
    if acc:
        lines.append(f"%d = pto.tile.matmul.acc %c, %l1, %r1 : {c_t}, {a_t}, {b_t} -> {c_t}")
        out = "%d"
    args.append(f"%out: pto.memref<{m}x{n}xf32>")
    lines.append(f"pto.tile.store {out}, %out[%c0, %c0] : pto.memref<{m}x{n}xf32>, {c_t}")
    text = f"module {{\nfunc.func @mm({', '.join(args)}) {{\n" + "\n".join(lines) + "\nreturn\n}\n}\n"
    feeds = {f"arg{2 * i + j}": mats[i][j] for i in range(pairs) for j in range(2)}
    want = sum(a.astype(np.float32) @ b.astype(np.float32) for a, b in mats)
    return text, feeds, {f"arg{2 * pairs}": want}, k


@settings(max_examples=12)
@given(cube_programs())
def test_generated_cube_programs_match_numpy(case):
    text, feeds, expected, k = case
    r = pyptoemu.run(text, inputs=feeds)
    assert r.findings == [], (text, r.findings)
    for name, want in expected.items():
        np.testing.assert_allclose(r.outputs[name], want, atol=1e-3 * k, err_msg=text)


@st.composite
def loop_programs(draw):
    """A loop over 16-row blocks of a (16*trips)x32 input: load, 1-4 vector ops, store."""
    trips = draw(st.sampled_from([2, 3, 4]))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    x = rng.uniform(-2, 2, (16 * trips, 32)).astype(np.float32)
    mt = f"pto.memref<{16 * trips}x32xf32>"
    t = "tile<16x32xf32>"
    body = [f"%t0 = pto.tile.load %x[%r, %c0] : {mt}, {t}"]
    value = x
    for i in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["abs", "neg", "adds", "rowexpandsub"]))
        if op in ("abs", "neg"):
            body.append(f"%t{i + 1} = pto.tile.{op} %t{i} : {t}")
            value = UNARY[op](value)
        elif op == "adds":
            body.append(f"%t{i + 1} = pto.tile.adds %t{i}, %half : {t}, f32 -> {t}")
            value = value + np.float32(0.5)
        else:
            body.append(f"%m{i} = pto.tile.rowmax %t{i} : {t} -> tile<16x1xf32>")
            body.append(f"%t{i + 1} = pto.tile.rowexpandsub %t{i}, %m{i} : {t}, tile<16x1xf32> -> {t}")
            value = value - value.max(1, keepdims=True)
        last = i + 1
    body.append(f"pto.tile.store %t{last}, %y[%r, %c0] : {mt}, {t}")
    text = (f"module {{\nfunc.func @rows(%x: {mt}, %y: {mt}) {{\n%c0 = pto.constant 0 : index\n"
            f"%c16 = pto.constant 16 : index\n%n = pto.constant {16 * trips} : index\n"
            "%half = pto.constant 0.5 : f32\n"
            "scf.for %r = %c0 to %n step %c16 {\n" + "\n".join(body) + "\n}\nreturn\n}\n}\n")
    return text, x, value


@settings(max_examples=12)
@given(loop_programs(), st.booleans())
def test_generated_loops_match_numpy_with_and_without_software_pipelining(case, pipelined):
    text, x, want = case
    r = pyptoemu.run(text, inputs={"arg0": x}, software_pipeline=pipelined)
    assert r.findings == [], (text, r.findings)
    np.testing.assert_allclose(r.outputs["arg1"], want, rtol=1e-5, atol=1e-6, err_msg=text)
