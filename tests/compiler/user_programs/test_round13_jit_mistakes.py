"""Thirteenth red-team round: mistakes around pl.load in @pl.jit programs (progs/r13_jit_mistakes.py),
each refused at the user's line with a message that names what the user wrote (pl.load, its keyword
valid_shape), never block.load, the IR op it lowers to (was: 'block.load: window [8, 24) exceeds
dim 0 ...'), and never a traceback."""

from __future__ import annotations

import os

import numpy as np
import pytest

from pypto.errors import PyptoError

from .helpers import HERE, load_file

MISTAKES = os.path.join(HERE, "progs", "r13_jit_mistakes.py")


def _z(*shape: int, dtype: type = np.float32) -> np.ndarray:
    return np.zeros(shape, dtype)


CASES = [
    ("load_past_the_end", (_z(16, 32), _z(16, 32)), 9, "pl.load: window [8, 24) exceeds dim 0 of size 16 of the tensor"),
    ("load_offsets_of_the_wrong_rank", (_z(16, 32), _z(16, 32)), 15,
     "pl.load: offsets, shapes and valid_shape need the same non-zero length"),
    ("load_into_left", (_z(16, 32), _z(16, 32)), 21, "pl.load: target_memory must be Vec or Mat, got Left"),
    ("fp16_scaled_by_a_float_literal", (_z(16, 32, dtype=np.float16), _z(16, 32, dtype=np.float16)), 28,
     "pl.store: tile dtype FP32 differs from output tensor dtype FP16"),
    ("load_a_tile", (_z(16, 32), _z(8, 32)), 35, "pl.load: argument 'tensor' must be a Tensor, got Tile[[16, 32], FP32]"),
]


@pytest.mark.parametrize(("name", "args", "line", "said"), CASES, ids=[c[0] for c in CASES])
def test_a_load_mistake_is_refused_at_the_users_line_in_the_users_words(name, args, line, said):
    fn = getattr(load_file(MISTAKES, "r13_bad"), name)
    with pytest.raises(PyptoError) as e:
        fn(*args)
    first = str(e.value).splitlines()[0]
    assert first.startswith(f"{MISTAKES}:{line}:"), first
    assert said in first, first
    assert "block.load" not in str(e.value) and "Traceback" not in e.value.render()
