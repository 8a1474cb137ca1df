"""Kernels that misuse operands fail with a precise message at the op, never a Python traceback.
Also a seeded fuzz: random mutations of the example kernels raise only the emulator's own errors."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pyptoemu
from ptoisa.text import ast as A
from ptoisa.text.parser import parse_module
from pyptoemu.api import choose_entry
from pyptoemu.errors import InputError, PtoError

ROOT = Path(__file__).resolve().parents[3]
VADD = (ROOT / "examples" / "vadd_32x32.pto").read_text()


def test_index_where_a_tile_belongs():
    text = VADD.replace("outs(%z : !pto.tile_buf", "outs(%c0 : !pto.tile_buf", 1)
    with pytest.raises(InputError, match=r"<string>:\d+:\d+: pto.tadd: outs operand 0 \(%c0\) must be a tile, "
                                         r"got a scalar"):
        pyptoemu.run(text)


def test_tile_in_the_wrong_location():
    text = VADD.replace("%z = pto.alloc_tile addr = %c8192_i64 : !pto.tile_buf<loc=vec",
                        "%z = pto.alloc_tile addr = %c8192_i64 : !pto.tile_buf<loc=mat")
    text = text.replace("outs(%z : !pto.tile_buf<loc=vec", "outs(%z : !pto.tile_buf<loc=mat")
    with pytest.raises(InputError, match=r"pto.tadd: outs operand 0 \(%z\) is in mat; this op takes vec"):
        pyptoemu.run(text)


def test_tile_where_an_address_belongs():
    text = VADD.replace("%y = pto.alloc_tile addr = %c4096_i64", "%y = pto.alloc_tile addr = %x")
    with pytest.raises(InputError, match=r"pto.alloc_tile: 'addr' \(%x\) must be a number \(index or integer\), "
                                         r"but it is a !pto.tile_buf"):
        pyptoemu.run(text)


def _mutate(text: str, rng: random.Random) -> str:
    lines = text.splitlines()
    body = [i for i, ln in enumerate(lines) if ln.strip().startswith(("pto.", "%"))]
    i = rng.choice(body)
    mode = rng.choice(["delete", "duplicate", "number", "name"])
    if mode == "delete":
        del lines[i]
    elif mode == "duplicate":
        lines.insert(i, lines[i])
    elif mode == "number":
        nums = re.findall(r"\b\d+\b", lines[i])
        if nums:
            lines[i] = lines[i].replace(rng.choice(nums), str(rng.choice([0, 1, 3, 17, 100000])), 1)
    else:
        names = re.findall(r"%[A-Za-z_]\w*", lines[i])
        every = re.findall(r"%[A-Za-z_]\w*", text)
        if names:
            lines[i] = lines[i].replace(rng.choice(names), rng.choice(every), 1)
    return "\n".join(lines)


KERNELS = ["vadd_32x32.pto", "softmax_rows_64x128.pto", "matmul_splitk.pto", "iter_args_accumulate.pto",
           "vadd_nosync.pto"]


@settings(max_examples=60)
@given(name=st.sampled_from(KERNELS), seed=st.integers(0, 10**6))
def test_mutated_kernels_raise_only_emulator_errors(name, seed):
    text = _mutate((ROOT / "examples" / name).read_text(), random.Random(seed))
    try:
        fn = choose_entry(parse_module(text, name), None)
        args = {f"arg{k}": (True if t.name == "i1" else 64) for k, t in enumerate(fn.arg_types)
                if isinstance(t, A.ScalarType)}
        pyptoemu.run(text, args=args, races="warn", max_steps=200_000)
    except PtoError as e:
        assert e.loc is None or re.match(r"\S+:\d+:\d+", str(e)), str(e)
