"""Fifteenth red-team round: a level-2 kernel run with ``--software-pipeline`` or ``--dump-passes``
(both for the tile-level form, seed 002, which is lowered first) ran silently as if they were not
given; it now says they were ignored (the run is unchanged)."""

from __future__ import annotations

import contextlib
import io

import pytest

import pyptoemu
from pyptoemu.cli import main
from tests.e2e.user_kernels.running import KERNELS

KERNEL = KERNELS / "r15_k05_tile_yielded_from_if_nosync.pto"


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize(("options", "named"), [
    ({"software_pipeline": True}, "--software-pipeline only applies"),
    ({"dump_passes": "DIR"}, "--dump-passes only applies"),
    ({"software_pipeline": True, "dump_passes": "DIR"}, "--dump-passes and --software-pipeline only apply"),
])
def test_tile_level_options_on_a_level2_kernel_are_said_to_be_ignored(tmp_path, options, named):
    if "dump_passes" in options:
        options = {**options, "dump_passes": tmp_path / "passes"}
    plain = pyptoemu.run(KERNEL, args={"arg2": 16}, data=False)
    r = pyptoemu.run(KERNEL, args={"arg2": 16}, data=False, **options)
    note = [n for n in r.notices if "tile-level form" in n]
    assert note == [(f"{KERNEL}: {named} to a kernel in the tile-level form (seed 002), which is lowered "
                    "first; this one is level-2 .pto already: ignored")], r.notices
    assert r.cycles == plain.cycles
    assert not (tmp_path / "passes").exists()
    assert not [n for n in plain.notices if "tile-level form" in n]


def test_the_note_reaches_the_command_line(tmp_path):
    code, _out, err = _cli("run", str(KERNEL), "--arg", "arg2=16", "--no-data", "--software-pipeline",
                           "--output-dir", str(tmp_path))
    assert code == 0
    assert f"note: {KERNEL}: --software-pipeline only applies to a kernel in the tile-level form" in err
