"""Running a red-team kernel of ``kernels/`` the two ways a user does: through ``pyptoemu.run``
(with no finding expected) and through the command line with ``--json``."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pyptoemu
from pyptoemu.cli import main

KERNELS = Path(__file__).resolve().parent / "kernels"


def run_clean(name: str, inputs: dict, args: dict | None = None, blocks: int = 1) -> pyptoemu.RunResult:
    """``kernels/name`` through ``pyptoemu.run``; the run has no finding."""
    r = pyptoemu.run(KERNELS / name, inputs=inputs, args=args or {}, blocks=blocks)
    assert [str(f) for f in r.findings] == []
    return r


def run_clean_twice(name: str, inputs: dict, args: dict | None = None, blocks: int = 1) -> pyptoemu.RunResult:
    """:func:`run_clean`, then the same kernel timing-only (``data=False``): the same cycles, no
    finding and the same bound text, and no outputs (issue 8 item 6)."""
    r = run_clean(name, inputs, args, blocks)
    timing = pyptoemu.run(KERNELS / name, args=args or {}, blocks=blocks, data=False)
    assert (timing.cycles, [str(f) for f in timing.findings], timing.bound) == (r.cycles, [], r.bound)
    assert timing.outputs == {}
    return r


def cli_json(name: str, args: dict, tmp_path: Path, *extra: str, blocks: int | None = None) -> tuple[int, dict | str]:
    """``pyptoemu run kernels/name --json``: (exit code, the JSON summary, or stderr + stdout if it failed)."""
    argv = ["run", str(KERNELS / name), "--json", "--output-dir", str(tmp_path / "out")]
    if blocks is not None:
        argv += ["--blocks", str(blocks)]
    for k, v in args.items():
        argv += ["--arg", f"{k}={v}"]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([*argv, *extra])
    return code, (json.loads(out.getvalue()) if code == 0 else err.getvalue() + out.getvalue())


def message_lines(out: str, name: str) -> list[str]:
    """What follows ``name:`` on each line of ``out`` that names it (a located message's
    ``line:col: text``, the file name cut off)."""
    return [line.split(f"{name}:", 1)[1] for line in out.splitlines() if f"{name}:" in line]
