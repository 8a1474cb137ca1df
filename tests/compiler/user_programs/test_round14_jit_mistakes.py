"""Fourteenth red-team round: mistakes around loops and subscripts in @pl.jit programs
(progs/r14_jit_mistakes.py), each refused at the user's line with a message naming what is wrong, and
never a traceback: pl.pipeline without stage=, pl.unroll with init_values, a subscript with a step or a
negative index (pypto-jit §5, §6.1), a slice assignment whose value has another shape, a pl.while_
whose first statement is not pl.cond."""

from __future__ import annotations

import os

import numpy as np
import pytest

from pypto.errors import PyptoError

from .helpers import HERE, load_file

MISTAKES = os.path.join(HERE, "progs", "r14_jit_mistakes.py")

CASES = [
    ("pipeline_without_stage", "9:18", "pl.pipeline needs stage=F"),
    ("unroll_with_init_values", "17:25", "pl.unroll does not take init_values"),
    ("subscript_with_a_step", "25:31", "slices with a step are not supported"),
    ("subscript_with_a_negative_index", "31:31", "axis 0: window [-8, 16) is outside 0..16"),
    ("slice_assignment_of_another_shape", "37:9", "value of shape [8, 32] does not fit the window of shape [8, 16]"),
    ("while_without_cond_first", "44:9", "the first statement of a pl.while_ loop must be pl.cond(...)"),
]


@pytest.mark.parametrize(("name", "where", "said"), CASES, ids=[c[0] for c in CASES])
def test_a_loop_or_subscript_mistake_is_refused_at_the_users_line(name, where, said):
    fn = getattr(load_file(MISTAKES, "r14_bad"), name)
    with pytest.raises(PyptoError) as e:
        fn(np.zeros((16, 32), np.float32), np.zeros((16, 32), np.float32))
    first = str(e.value).splitlines()[0]
    assert first.startswith(f"{MISTAKES}:{where}: error: "), first
    assert said in first, first
    assert "Traceback" not in e.value.render()
