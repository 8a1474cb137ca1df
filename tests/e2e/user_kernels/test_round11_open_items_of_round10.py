"""Eleventh red-team round, part 1: what round 10 left open, each decided from the spec and pinned
(kernels/r11_*.pto; the first lines of each say what is wrong or what it checks, and what the
emulator did before)."""

from __future__ import annotations

import numpy as np
import pytest

import pyptoemu
from pyptoemu.errors import KernelFault
from ptoisa.errors import PtoError
from tests.e2e.user_kernels.running import KERNELS, cli_json, run_clean


def _lines(out: str, name: str) -> list[str]:
    return [line.split(f"{name}:", 1)[1] for line in out.splitlines() if f"{name}:" in line]


def test_gather_mask_form_keeps_each_row_in_its_own_destination_row():
    x = np.random.default_rng(11).standard_normal((4, 8)).astype(np.float32)
    r = run_clean("r11_k01_gather_mask_rows_padded.pto", {"arg0": x})
    np.testing.assert_array_equal(r.outputs["arg1"].reshape(4, 4), x[:, 0::2])
    np.testing.assert_array_equal(r.outputs["arg2"].reshape(4, 4), x[:, 1::2])
