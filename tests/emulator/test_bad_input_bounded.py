"""Bad input is bounded and located: literals, types, arguments, files and resources are checked
before anything large is allocated, and every error names its file:line:col; an emulator bug is an
``internal error`` (exit 3), never a fault blamed on the kernel."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

import pyptoemu
from ptoisa.text import parser as text_parser
from pyptoemu.cli import main
from pyptoemu.core import aicore
from pyptoemu.errors import InputError, InternalError, ParseError, VerifyError
from pyptoemu.isa.semantics import SEMANTICS
from tests.emulator.core.kernels import binary_kernel, pview, vec

ROOT = Path(__file__).resolve().parents[2]
VADD = (ROOT / "examples" / "vadd_32x32.pto").read_text()
T = vec(16, 64)
P = pview(16, 64)


def _constant(literal: str, tname: str) -> str:
    return binary_kernel(f"    %k = arith.constant {literal} : {tname}")


@pytest.mark.parametrize(("literal", "tname", "message"), [
    ("1.5", "index", r"arith.constant 1.5 is not an integer, but its type is index"),
    ("-1e400", "index", r"arith.constant -inf is not an integer"),
    ("1e400", "f32", r"arith.constant inf is out of range for f32"),
    ("1e39", "f32", r"arith.constant 1e\+39 is out of range for f32"),
    ("300", "i8", r"arith.constant 300 is out of range for i8"),
    ("18446744073709551616", "index", r"out of range for index"),
    ("1", "f8", r"unknown element type 'f8'"),
])
def test_literals_are_range_checked_for_their_type(literal, tname, message):
    with pytest.raises(VerifyError, match=r"<string>:\d+:\d+: .*" + message):
        pyptoemu.run(_constant(literal, tname))


def test_the_literals_of_the_type_still_work():
    ok = binary_kernel("    %a = arith.constant 255 : i8\n    %b = arith.constant -128 : i8\n"
                       "    %c = arith.constant 2.0 : index\n    %d = arith.constant 65504.0 : f16")
    assert pyptoemu.run(ok).cycles >= 0


def test_a_literal_of_4400_digits_is_a_parse_error():
    with pytest.raises(ParseError, match=r"<string>:\d+:\d+: numeric literal of 4400 characters is out of range"):
        pyptoemu.run(_constant("7" * 4400, "index"))


def test_unknown_dtype_in_a_tile_or_pointer_is_located():
    text = VADD.replace("dtype=f32", "dtype=f8", 1)
    with pytest.raises(InputError, match=r"<string>:\d+:\d+: .*f8"):
        pyptoemu.run(text)
    with pytest.raises(InputError, match=r"<string>:\d+:\d+: .*unknown element type 'f8'"):
        pyptoemu.run(VADD.replace("%arg0: !pto.ptr<f32>", "%arg0: !pto.ptr<f8>", 1))


@pytest.mark.parametrize(("value", "message"), [
    (2**63, r"argument arg3: 9223372036854775808 is out of range for i32"),
    (-(2**31) - 1, r"out of range for i32"),
    ("1.5", r"argument arg3 is i32 but got 1.5"),
    ("nan", r"argument arg3 is i32 but got nan"),
])
def test_scalar_arguments_are_range_checked(value, message):
    text = binary_kernel("").replace("%arg2: !pto.ptr<f32>)", "%arg2: !pto.ptr<f32>, %n: i32)")
    with pytest.raises(InputError, match=message):
        pyptoemu.run(text, args={"arg3": value})
    assert pyptoemu.run(text, args={"arg3": 2**31 - 1}).cycles >= 0


def test_a_npy_header_claiming_2_40_elements_is_refused_before_allocating(tmp_path):
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776,), }"
    header += " " * (118 - len(header)) + "\n"
    bad = tmp_path / "big.npy"
    bad.write_bytes(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + bytes(64))
    with pytest.raises(InputError, match=r"the header claims 1099511627776 elements of float32 .* but the file "
                                         r"holds 64 bytes"):
        pyptoemu.run(ROOT / "examples" / "vadd_32x32.pto", inputs={"arg0": str(bad)})


def test_a_bom_is_accepted_and_bad_utf8_is_located(tmp_path):
    ok = tmp_path / "bom.pto"
    ok.write_bytes(b"\xef\xbb\xbf" + VADD.encode())
    assert pyptoemu.run(ok).outputs
    bad = tmp_path / "bad.pto"
    lines = VADD.encode().split(b"\n")
    lines[4] = b"  // caf\xc3\xa9 \xff"
    bad.write_bytes(b"\n".join(lines))
    with pytest.raises(ParseError, match=rf"{bad}:5:11: the file is not UTF-8: byte 0xff"):
        pyptoemu.run(bad)


def test_the_pto_file_size_is_bounded(tmp_path, monkeypatch):
    monkeypatch.setattr(text_parser, "MAX_SOURCE_BYTES", 1000)
    k = tmp_path / "k.pto"
    k.write_text(VADD)
    with pytest.raises(InputError, match=r"is \d+ bytes; the emulator reads `.pto` files of at most"):
        pyptoemu.run(k)


def test_generated_input_data_is_bounded_over_all_arguments(monkeypatch):
    monkeypatch.setattr(aicore, "MAX_GENERATED_TOTAL", 2 * 16 * 64 * 4 + 100)
    with pytest.raises(InputError, match=r"<string>:\d+:\d+: the view made here over arg2 brings the generated "
                                         r"stand-in data of all arguments to"):
        pyptoemu.run(binary_kernel(""))


def test_an_emulator_bug_is_an_internal_error_with_the_op_and_location(tmp_path, monkeypatch, capsys):
    def broken(ins, outs, attrs):
        raise TypeError("int() argument must be a string")

    monkeypatch.setitem(SEMANTICS, "binary_add", broken)
    with pytest.raises(InternalError) as info:
        pyptoemu.run(VADD)
    assert isinstance(info.value.cause, TypeError) and info.value.loc is not None
    assert "pto.tadd" in str(info.value) and "internal error" in str(info.value)
    k = tmp_path / "k.pto"
    k.write_text(VADD)
    assert main(["run", str(k), "--output-dir", str(tmp_path)]) == 3
    err = capsys.readouterr().err
    assert f"{k}:" in err and "internal error while processing pto.tadd: TypeError" in err
    assert "please report it" in err and "Traceback" not in err


def test_a_kernel_fault_from_a_pipe_keeps_its_location():
    # an empty window known only when it runs, block 0's index (a constant size other than the type's,
    # or one computed from constants, is rejected before running)
    text = VADD.replace("sizes = [%c32, %c32]", "sizes = [%zero, %c32]", 1).replace(
        "%c1 = arith.constant 1 : index", "%c1 = arith.constant 1 : index\n    %blk = pto.get_block_idx\n"
        "    %zero = arith.index_cast %blk : i64 to index", 1)
    with pytest.raises(pyptoemu.KernelFault) as info:
        pyptoemu.run(text)
    assert info.value.loc is not None and str(info.value).startswith("<string>:")
    assert np.isfinite(info.value.loc.line)
