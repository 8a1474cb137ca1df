"""A kernel with no sync that automatic insertion cannot handle (tassign) still runs: in program
order, exactly; asking for --sync auto explicitly is an error that says why."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

import pyptoemu
from pyptoemu.errors import InputError

KERNEL = Path(__file__).parent / "data" / "tassign_nosync.pto"


def test_falls_back_to_program_order():
    x = np.random.default_rng(0).random((16, 16), dtype=np.float32)
    r = pyptoemu.run(KERNEL, inputs={"arg0": x}, keep_log=True)
    assert r.sync_mode == "serial"
    assert "program order" in r.notices[0] and "tassign" in r.notices[0]
    np.testing.assert_allclose(r.outputs["arg1"], x * 3 + 3, rtol=1e-6)
    assert r.findings == []
    # every tile instruction is followed by a full barrier: the pipes never overlap
    ops = sorted((i for i in r.core.trace_log if i.kind == 0), key=lambda i: i.start)
    assert all(a.done <= b.start for a, b in itertools.pairwise(ops))


def test_explicit_auto_reports_why_not():
    with pytest.raises(InputError, match=r"tassign_nosync.pto:13:3: pto.tassign rebinds a tile"):
        pyptoemu.run(KERNEL, sync="auto")
