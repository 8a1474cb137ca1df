"""Fuzz: mutated example kernels (fixed seed, a few hundred cases) end with no traceback and no
hang, with an exit code in {0, 1, 2}, and every error names its file:line:col.

The mutations are the bad inputs users write and tools emit: a deleted, duplicated or truncated
line, a number replaced by an extreme (huge, negative, 4400 digits, -1e400, 1.5), an SSA name
swapped, an operand dropped, an unknown dtype, a tile moved to another location, a byte that is not
UTF-8, a byte order mark. Runs go through the same path as ``pyptoemu run`` (a file on disk, the
Python API), with a step budget so a mutated loop bound cannot run for minutes.
"""

from __future__ import annotations

import random
import re
import signal
from pathlib import Path

import pytest

import pyptoemu
from ptoisa.text import ast as A
from pyptoemu.api import choose_entry, load_kernel
from pyptoemu.errors import FindingsError, InternalError, PtoError

ROOT = Path(__file__).resolve().parents[2]
KERNELS = ["vadd_32x32.pto", "vadd_nosync.pto", "iter_args_accumulate.pto", "softmax_nosync.pto",
           "matmul_splitk.pto", "vadd_race.pto"]
CASES = 300
LOCATED = re.compile(r"^\S+:\d+:\d+: ")
NUMBERS = ["0", "-1", "1.5", "-1e400", "1e400", "4294967296", "9223372036854775808", "7" * 4400,
           "100000000", "3", "65"]
DTYPES = ["f8", "i8", "f16", "bf16", "i64", "ui8", "xyz"]


def _mutate_line(lines: list[str], i: int, rng: random.Random, text: str) -> None:
    mode = rng.choice(["delete", "duplicate", "number", "name", "operand", "dtype", "loc", "truncate"])
    line = lines[i]
    if mode == "delete":
        del lines[i]
    elif mode == "duplicate":
        lines.insert(i, line)
    elif mode == "number":
        nums = re.findall(r"(?<![\w%#])\d+\b", line)
        if nums:
            lines[i] = line.replace(rng.choice(nums), rng.choice(NUMBERS), 1)
    elif mode == "name":
        names = re.findall(r"%[A-Za-z_]\w*", line)
        if names:
            lines[i] = line.replace(rng.choice(names), rng.choice(re.findall(r"%[A-Za-z_]\w*", text)), 1)
    elif mode == "operand":
        lines[i] = re.sub(r",\s*%[\w#]+", "", line, count=1)
    elif mode == "dtype":
        lines[i] = re.sub(r"\b(f32|f16|i32|index)\b", rng.choice(DTYPES), line, count=1)
    elif mode == "loc":
        lines[i] = line.replace("loc=vec", rng.choice(["loc=mat", "loc=acc", "loc=left", "loc=bogus"]), 1)
    else:
        lines[i] = line[: rng.randrange(len(line) + 1)]


def _mutant(text: str, rng: random.Random) -> bytes:
    lines = text.splitlines()
    body = [i for i, ln in enumerate(lines) if ln.strip() and not ln.strip().startswith("//")]
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        _mutate_line(lines, rng.choice(body), rng, text)
        body = [i for i in body if i < len(lines)] or [0]
    data = "\n".join(lines).encode()
    extra = rng.random()
    if extra < 0.03:
        data = b"\xef\xbb\xbf" + data  # a byte order mark: accepted
    elif extra < 0.06:
        k = rng.randrange(len(data))
        data = data[:k] + b"\xff" + data[k:]  # not UTF-8: a located error
    return data


def _scalar_args(path: Path) -> dict:
    try:
        fn = choose_entry(load_kernel(path), None)
    except PtoError:
        return {}
    return {f"arg{k}": (True if t.name == "i1" else 64) for k, t in enumerate(fn.arg_types)
            if isinstance(t, A.ScalarType)}


class _Hang(Exception):
    pass


def _alarm(signum, frame):
    raise _Hang


def _exit_code(path: Path) -> tuple[int, list[str]]:
    """What ``pyptoemu run`` would end with, and every error line it would print."""
    try:
        res = pyptoemu.run(path, args=_scalar_args(path), max_steps=20_000)
    except FindingsError as e:  # the run completed with error findings: each is located
        return e.exit_code, [str(f) for f in e.findings if f.severity == "error"]
    except PtoError as e:
        return e.exit_code, str(e).splitlines()[:1] if not hasattr(e, "errors") else str(e).splitlines()
    return (1 if res.errors() else 0), [str(f) for f in res.errors()]


@pytest.mark.skipif(not hasattr(signal, "SIGALRM"), reason="needs SIGALRM for the hang guard")
def test_mutated_kernels_exit_cleanly_with_located_errors(tmp_path):
    rng = random.Random(20261125)
    texts = {name: (ROOT / "examples" / name).read_text() for name in KERNELS}
    codes: dict[int, int] = {}
    old = signal.signal(signal.SIGALRM, _alarm)
    try:
        for case in range(CASES):
            name = rng.choice(KERNELS)
            path = tmp_path / f"m{case}_{name}"
            path.write_bytes(_mutant(texts[name], rng))
            signal.alarm(10)
            try:
                code, errors = _exit_code(path)
            except InternalError as e:
                pytest.fail(f"case {case} ({path.name}): {e}\n{path.read_bytes().decode(errors='replace')}")
            except _Hang:
                pytest.fail(f"case {case} ({path.name}) did not end within 10 s")
            finally:
                signal.alarm(0)
            assert code in (0, 1, 2), (case, code)
            for line in errors:
                assert LOCATED.match(line), f"case {case} ({path.name}): error without a location: {line}"
            codes[code] = codes.get(code, 0) + 1
    finally:
        signal.signal(signal.SIGALRM, old)
    # the mutations reach every outcome: runs that still succeed, kernel faults and bad input
    assert codes.get(0, 0) > 10 and codes.get(2, 0) > 50, codes
