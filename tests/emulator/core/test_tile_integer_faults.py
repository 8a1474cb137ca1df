"""Integer tile ops whose result has no value fault at the op, naming the element and its operands
(exit 1), as the scalar arith ops do (core/arith.py): tdiv / tdivs / trem / trems / tfmod by 0, the
signed quotient min / -1, tshl / tshr / tshls / tshrs by a count outside [0, bit width). They gave
0 or -1 silently before. The edge values that do have a result stay exact. A timing-only run reads
no data, so it cannot know and runs on."""

from __future__ import annotations

import re

import numpy as np
import pytest

import pyptoemu
from pyptoemu.cli import main
from pyptoemu.errors import KernelFault
from tests.emulator.core.kernels import binary_kernel, pview, vec

ROWS, COLS = 2, 8


def _kernel(op_line: str, dtype: str, scalar: str = "", tmp: bool = False) -> tuple[str, int]:
    """tload a (arg0) and b (arg1), ``op_line`` into d, tstore d (arg2); the op's line number."""
    t, v = vec(ROWS, COLS, dtype), pview(ROWS, COLS, dtype)
    lines = [f"    %a = pto.alloc_tile : {t}", f"    %b = pto.alloc_tile : {t}", f"    %d = pto.alloc_tile : {t}"]
    if tmp:
        lines.append(f"    %w = pto.alloc_tile : {t}")
    lines += [f"    pto.tload ins(%p0 : {v}) outs(%a : {t})", f"    pto.tload ins(%p1 : {v}) outs(%b : {t})",
              "    pto.barrier <PIPE_ALL>", "    " + op_line.format(t=t), "    pto.barrier <PIPE_ALL>",
              f"    pto.tstore ins(%d : {t}) outs(%p2 : {v})"]
    text = binary_kernel("\n".join(lines), ROWS, COLS, dtype, extra_consts=scalar)
    line = next(i for i, ln in enumerate(text.splitlines(), 1) if ln.strip() == op_line.format(t=t))
    return text, line


TT = "pto.{op} ins(%a, %b : {{t}}, {{t}}) outs(%d : {{t}})"
TT_TMP = "pto.{op} ins(%a, %b, %w : {{t}}, {{t}}, {{t}}) outs(%d : {{t}})"
TS = "pto.{op} ins(%a, %s : {{t}}, {dt}) outs(%d : {{t}})"
TS_TMP = "pto.{op} ins(%a, %s, %w : {{t}}, {dt}, {{t}}) outs(%d : {{t}})"


def _inputs(dtype: str, a_at: int, b_at: int) -> dict[str, np.ndarray]:
    """a = 7s and b = 3s except element (1, 5): a = ``a_at``, b = ``b_at``."""
    a = np.full((ROWS, COLS), 7, dtype)
    b = np.full((ROWS, COLS), 3, dtype)
    a[1, 5], b[1, 5] = a_at, b_at
    return {"arg0": a, "arg1": b}


# (op line, dtype, machine, a at (1, 5), b at (1, 5), scalar, message): the scalar forms take b's value
# as their scalar, so the bad element is the first one read with it, (0, 0).
CASES = {
    "tdiv by 0": (TT.format(op="tdiv"), "int32", "a5", 9, 0, None,
                  r"pto.tdiv: integer division by zero at element \(1, 5\): 9 / 0"),
    "tdiv min / -1": (TT.format(op="tdiv"), "int32", "a5", -2**31, -1, None,
                      r"pto.tdiv: signed division overflow .*int32.* at element \(1, 5\): -2147483648 / -1"),
    "tdiv i16 min / -1": (TT.format(op="tdiv"), "int16", "a5", -2**15, -1, None,
                          r"at element \(1, 5\): -32768 / -1"),
    "trem by 0": (TT_TMP.format(op="trem"), "int32", "a2a3", -4, 0, None,
                  r"pto.trem: integer division by zero at element \(1, 5\): -4 % 0"),
    "tshl by the width": (TT.format(op="tshl"), "int32", "a2a3", 1, 32, None,
                          r"pto.tshl: shift amount outside \[0, 32\) for int32 at element \(1, 5\): 1 << 32"),
    "tshr by a negative count": (TT.format(op="tshr"), "int16", "a2a3", 1, -1, None,
                                 r"pto.tshr: shift amount outside \[0, 16\) for int16 at element \(1, 5\): 1 >> -1"),
    "tshr ui8 by 9": (TT.format(op="tshr"), "uint8", "a2a3", 200, 9, None,
                      r"shift amount outside \[0, 8\) for uint8 at element \(1, 5\): 200 >> 9"),
    "tdivs by 0": (TS.format(op="tdivs", dt="i32"), "int32", "a5", 7, 3, 0,
                   r"pto.tdivs: integer division by zero at element \(0, 0\): 7 / 0 .*16 element"),
    "trems by 0": (TS_TMP.format(op="trems", dt="i32"), "int32", "a2a3", 7, 3, 0,
                   r"pto.trems: integer division by zero at element \(0, 0\): 7 % 0"),
    "tshls by 40": (TS.format(op="tshls", dt="i32"), "int32", "a2a3", 7, 3, 40,
                    r"pto.tshls: shift amount outside \[0, 32\) for int32 at element \(0, 0\): 7 << 40"),
}

_NAMES = {"int32": "i32", "int16": "i16", "uint8": "ui8"}


def _case(name: str) -> tuple[str, int, str, dict, str]:
    op_line, dtype, machine, a_at, b_at, s, message = CASES[name]
    dt = _NAMES[dtype]
    scalar = f"    %s = arith.constant {s} : {dt}" if s is not None else ""
    text, line = _kernel(op_line, dt, scalar, tmp="%w" in op_line)
    text = text.replace("module {", f'module attributes {{pto.target_arch = "{machine}"}} {{', 1)
    return text, line, machine, _inputs(dtype, a_at, b_at), message


@pytest.mark.parametrize("name", list(CASES))
def test_undefined_integer_tile_result_is_a_located_fault(name: str) -> None:
    text, line, _, inputs, message = _case(name)
    with pytest.raises(KernelFault) as info:
        pyptoemu.run(text, inputs=inputs)
    assert info.value.loc is not None and info.value.loc.line == line, (info.value.loc, line)
    assert info.value.kind == "fault"

    assert re.search(message, info.value.message), info.value.message


def test_cli_exit_1_at_the_op_line(tmp_path, capsys) -> None:
    text, line, _, inputs, _ = _case("tshl by the width")
    kernel = tmp_path / "k.pto"
    kernel.write_text(text)
    args = ["run", str(kernel), "--quiet", "--output-dir", str(tmp_path / "out")]
    for name, arr in inputs.items():
        np.save(tmp_path / f"{name}.npy", arr)
        args += ["--input", f"{name}={tmp_path / f'{name}.npy'}"]
    code = main(args)
    err = capsys.readouterr().err
    assert code == 1, err
    assert "Traceback" not in err
    assert f"{kernel}:{line}:" in err and "1 << 32" in err, err


def test_timing_only_run_cannot_know_and_runs_on() -> None:
    text, *_ = _case("tdiv by 0")
    res = pyptoemu.run(text, data=False)
    assert res.cycles > 0


@pytest.mark.parametrize(("op", "dtype", "machine", "a", "b", "want"), [
    ("tdiv", "int32", "a5", -2**31, 1, -2**31),      # min / 1 fits
    ("tdiv", "int32", "a5", -7, 2, -3),               # truncates toward zero
    ("trem", "int32", "a2a3", -2**31, -1, 0),         # min rem -1 = 0: exact, it fits
    ("trem", "int32", "a2a3", -7, 2, 1),              # floored: sign of b
    ("tshl", "int32", "a2a3", 1, 31, -2**31),         # the last count in range
    ("tshr", "int32", "a2a3", -2**31, 31, -1),        # arithmetic shift
    ("tshr", "uint8", "a2a3", 200, 7, 1),
])
def test_defined_edge_values_are_exact(op, dtype, machine, a, b, want) -> None:
    op_line = (TT_TMP if op == "trem" else TT).format(op=op)
    text, _ = _kernel(op_line, _NAMES[dtype], tmp=op == "trem")
    text = text.replace("module {", f'module attributes {{pto.target_arch = "{machine}"}} {{', 1)
    res = pyptoemu.run(text, inputs=_inputs(dtype, a, b))
    got = res.outputs["arg2"]
    assert int(got[1, 5]) == want
    rest = np.delete(got.reshape(-1), 1 * COLS + 5)
    ref = {"tdiv": 2, "trem": 1, "tshl": 56, "tshr": 0}[op]  # 7 op 3 elsewhere
    assert (rest == ref).all(), rest
