"""Twelfth red-team round: mistakes in @pl.jit programs (progs/r12_jit_mistakes.py), each refused at
the user's line with a message that says what is wrong, never a traceback. One was not: an Out
tensor's name rebound to a tile and then stored into was 'block.store: missing the output tensor'."""

from __future__ import annotations

import os

import numpy as np
import pytest

from pypto.errors import PyptoError

from .helpers import HERE, load_file

MISTAKES = os.path.join(HERE, "progs", "r12_jit_mistakes.py")


def _z(*shape: int, dtype: type = np.float32) -> np.ndarray:
    return np.zeros(shape, dtype)


CASES = [
    ("spmd_for_with_deps", (_z(16, 32), _z(16, 32)), 10, "pl.spmd() does not accept 'deps=' here"),
    ("split_aiv_three", (_z(32, 32), _z(32, 32)), 17, "pl.split_aiv(n): a core group has 2 AIVs, so n must be 2, got 3"),
    ("zero_slots", (_z(32, 32, dtype=np.float16), _z(32, 32, dtype=np.float16), _z(32, 32)), 23,
     "slot_num must be a positive integer, got 0"),
    ("opts_not_literal", (_z(32, 32, dtype=np.float16), _z(32, 32, dtype=np.float16), _z(32, 32)), 29,
     "optimizations= must be a list literal written at the call site"),
    ("pipeline_no_stage", (_z(32, 32), _z(32, 32)), 36, "pl.pipeline needs stage=F"),
    ("predicate_two_cmps", (_z(2, 1, dtype=np.int32), _z(16, 32), _z(16, 32)), 42,
     "pl.spmd(predicate=...) takes one comparison of one tensor element with an integer literal"),
    ("tile_subscript_step", (_z(16, 32), _z(8, 32)), 51, "slices with a step are not supported"),
    ("tile_subscript_runtime_extent", (_z(16, 32), _z(16, 32), 4), 58, "a tile slice needs a constant extent"),
    ("matmul_acc_vec_operands", (_z(16, 16), _z(16, 16)), 67, "matmul: operands must be in Left/Right"),
    ("out_rebound_other_dtype", (_z(8, 32), _z(8, 32)), 74,
     ("Cannot reassign 'y' with a different type: the Out parameter is Tensor[[8, 32], FP32], the value is "
      "Tensor[[8, 32], FP16]")),
    ("out_rebound_to_tile", (_z(8, 32), _z(8, 32)), 81,
     "pl.store: the output y is a tile, not a tensor (a tensor's name rebound to a tile?)"),
]


@pytest.mark.parametrize(("name", "args", "line", "said"), CASES, ids=[c[0] for c in CASES])
def test_a_mistake_in_a_jit_program_is_refused_at_the_users_line(name, args, line, said):
    fn = getattr(load_file(MISTAKES, "r12_bad"), name)
    with pytest.raises(PyptoError) as e:
        fn(*args)
    first = str(e.value).splitlines()[0]
    assert first.startswith(f"{MISTAKES}:{line}:"), first
    assert said in first, first
    assert "Traceback" not in str(e.value)
