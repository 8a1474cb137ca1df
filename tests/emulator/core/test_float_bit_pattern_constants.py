"""MLIR text writes infinities and NaN only as bit patterns (``arith.constant 0xFF800000 : f32`` is
-inf, the usual start of a running maximum). Such a constant is the literal itself and must run,
with its sign, in every float type; a decimal literal that overflows its type stays an error."""

from __future__ import annotations

import math

import numpy as np
import pytest

import pyptoemu
from pyptoemu.errors import PtoError

KERNEL = """module {{
  func.func @k(%o: !pto.ptr<f32>) {{
    %c0 = arith.constant 0 : index
    %v = arith.constant {literal} : {ty}
    %w = arith.extf %v : {ty} to f32
    pto.store_scalar %w, %o[%c0] : !pto.ptr<f32>, f32
    return
  }}
}}
"""
KERNEL_F32 = KERNEL.replace("    %w = arith.extf %v : {ty} to f32\n", "").replace("%w,", "%v,")


def _run(tmp_path, literal: str, ty: str) -> float:
    text = (KERNEL_F32 if ty == "f32" else KERNEL).format(literal=literal, ty=ty)
    path = tmp_path / "k.pto"
    path.write_text(text)
    r = pyptoemu.run(path, inputs={"arg0": np.zeros(1, np.float32)})
    return float(r.outputs["arg0"][0])


@pytest.mark.parametrize(("literal", "ty", "want"), [
    ("0xFF800000", "f32", -math.inf), ("0x7F800000", "f32", math.inf), ("0xFC00", "f16", -math.inf),
    ("0x7C00", "f16", math.inf), ("0xFF80", "bf16", -math.inf), ("0x3F80", "bf16", 1.0),
])
def test_infinities_written_as_bit_patterns_run_with_their_sign(tmp_path, literal, ty, want):
    assert _run(tmp_path, literal, ty) == want


def test_a_nan_bit_pattern_is_a_nan(tmp_path):
    assert math.isnan(_run(tmp_path, "0x7FC00000", "f32"))


@pytest.mark.parametrize("literal", ["1e400", "-1e400", "3.5e38"])
def test_a_decimal_literal_that_overflows_f32_is_still_refused_at_its_line(tmp_path, literal):
    with pytest.raises(PtoError, match=r"k\.pto:4:\d+: arith\.constant \S+ is out of range for f32"):
        _run(tmp_path, literal, "f32")
