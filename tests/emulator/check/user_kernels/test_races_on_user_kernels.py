"""Red-team tests for the happens-before race detector: correct hand-synced kernels with
unusual-but-legal orderings report nothing; removing exactly one needed sync op reports a race
naming the two right source lines (or a deadlock / double-set / leftover flag)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pyptoemu
from pyptoemu.errors import DeadlockError, FindingsError

KERNELS = Path(__file__).parent / "kernels"
SYNC_KINDS = {"race", "deadlock", "double-set", "flag-left-set", "wait-never-set", "event-id-range"}
X8 = np.arange(64, dtype=np.float32).reshape(8, 8) + 1


def _run(kernel, **options):
    """``pyptoemu.run``, returning the result of a run that ended with error findings (a race, a
    double set): these tests read the findings; that such a run raises is tested in
    tests/emulator/test_result_and_faults.py."""
    try:
        return pyptoemu.run(kernel, **options)
    except FindingsError as e:
        return e.result


def _src(name: str) -> str:
    return (KERNELS / f"{name}.pto").read_text()


def _line(src: str, needle: str, nth: int = 0) -> int:
    """1-based line number of the nth line containing ``needle``."""
    hits = [i + 1 for i, line in enumerate(src.splitlines()) if needle in line]
    return hits[nth]


def _drop(src: str, needle: str, nth: int = 0) -> str:
    lines = src.splitlines()
    del lines[_line(src, needle, nth) - 1]
    return "\n".join(lines) + "\n"


def _blank(src: str, needle: str, nth: int = 0) -> str:
    """Replace one line by a comment, so that every other line keeps its number."""
    lines = src.splitlines()
    lines[_line(src, needle, nth) - 1] = "    // removed"
    return "\n".join(lines) + "\n"


def _races(res) -> list:
    return [f for f in res.findings if f.kind == "race"]


def _race_lines(f) -> tuple[int, int]:
    return (int(f.detail["first"]["line"].split(":")[-2]), int(f.detail["second"]["line"].split(":")[-2]))


D03_IN = {"arg0": np.arange(64 * 16, dtype=np.float32).reshape(64, 16)}

GOOD = [
    ("d01_transitive", {"arg0": X8, "arg1": -X8}, {}, {"arg2": X8, "arg3": 1 - X8}),
    ("d02_record_event", {"arg0": X8}, {}, {"arg1": (X8 + 1) * X8}),
    ("d03_dyn_ids_pingpong", D03_IN, {"arg2": 8}, {"arg1": 3 * D03_IN["arg0"]}),
    ("d03_dyn_ids_pingpong", D03_IN, {"arg2": 1}, {"arg1": 3 * D03_IN["arg0"][:8]}),
    ("d03_dyn_ids_pingpong", D03_IN, {"arg2": 0}, {}),
    ("d04_barrier_in_if", {"arg0": X8}, {"arg3": True, "arg4": True}, {"arg1": X8 + 1, "arg2": X8 + 1}),
    ("d04_barrier_in_if", {"arg0": X8}, {"arg3": False, "arg4": True}, {"arg1": X8 + 1, "arg2": X8 + 1}),
    ("d05_scalar_gm", {"arg0": X8}, {}, {"arg1": 2 * X8, "arg2": np.full((8, 8), 8.0, np.float32)}),
]


@pytest.mark.parametrize("name,inputs,args,expected", GOOD,
                         ids=[f"{g[0]}-{i}" for i, g in enumerate(GOOD)])
def test_correct_hand_synced_kernels_are_clean(name, inputs, args, expected):
    res = _run(KERNELS / f"{name}.pto", inputs=inputs, args=args)
    assert res.sync_mode == "asis"
    assert [str(f) for f in res.findings if f.kind in SYNC_KINDS] == []
    for k, want in expected.items():
        got = res.outputs[k].reshape(-1)[: want.size].reshape(want.shape)
        np.testing.assert_array_equal(got, want)


def test_pipe_all_only_kernel_is_clean():
    """Every flag of d01 replaced by a full barrier: still no finding."""
    src = _src("d01_transitive")
    out = []
    for line in src.splitlines():
        if "pto.set_flag" in line:
            continue
        out.append(line.replace(line.strip(), "pto.barrier <PIPE_ALL>") if "pto.wait_flag" in line else line)
    res = _run("\n".join(out) + "\n", inputs={"arg0": X8, "arg1": -X8})
    assert res.sync_mode == "asis" and res.findings == []
    np.testing.assert_array_equal(res.outputs["arg3"], 1 - X8)


# ------------------------------------------------------------------------------ broken variants


def test_d01_missing_v_to_mte3_wait():
    src = _src("d01_transitive")
    bad = _blank(src, "pto.wait_flag[<PIPE_V>, <PIPE_MTE3>")
    res = _run(bad, inputs={"arg0": X8, "arg1": -X8})
    pairs = {_race_lines(f) for f in _races(res)}
    assert (_line(src, "pto.tadds"), _line(src, "outs(%po2")) in pairs
    # the transitive MTE2 -> MTE3 ordering of %a is gone too
    assert (_line(src, "outs(%a :"), _line(src, "outs(%po :")) in pairs
    assert any(f.kind == "flag-left-set" for f in res.findings)


def test_d01_missing_v_to_mte3_set_deadlocks():
    bad = _blank(_src("d01_transitive"), "pto.set_flag[<PIPE_V>, <PIPE_MTE3>")
    with pytest.raises(DeadlockError):
        pyptoemu.run(bad, inputs={"arg0": X8, "arg1": -X8})


def test_d02_missing_barrier_sync():
    src = _src("d02_record_event")
    res = _run(_blank(src, "pto.barrier_sync"), inputs={"arg0": X8})
    pairs = {_race_lines(f) for f in _races(res)}
    assert (_line(src, "pto.tadds"), _line(src, "pto.tmul ")) in pairs
    f = next(f for f in _races(res) if _race_lines(f) == (_line(src, "pto.tadds"), _line(src, "pto.tmul ")))
    assert f.detail["first"]["pipe"] == "V" and f.detail["second"]["pipe"] == "V"


def test_d02_missing_wait_event():
    src = _src("d02_record_event")
    res = _run(_blank(src, "pto.wait_event [#pto.pipe_event_type<TLOAD>"), inputs={"arg0": X8})
    pairs = {_race_lines(f) for f in _races(res)}
    assert (_line(src, "outs(%a :"), _line(src, "pto.tadds")) in pairs
    assert any(f.kind == "flag-left-set" for f in res.findings)


def test_d03_missing_loop_war_set_deadlocks():
    bad = _blank(_src("d03_dyn_ids_pingpong"), "pto.set_flag_dyn [#pto.pipe<PIPE_MTE3>, #pto.pipe<PIPE_MTE2>, %e]")
    with pytest.raises(DeadlockError):
        pyptoemu.run(bad, inputs=D03_IN, args={"arg2": 3})


def test_d03_missing_loop_war_wait():
    src = _src("d03_dyn_ids_pingpong")
    bad = _blank(src, "pto.wait_flag_dyn [#pto.pipe<PIPE_MTE3>, #pto.pipe<PIPE_MTE2>, %e]")
    try:
        res = _run(bad, inputs=D03_IN, args={"arg2": 6})
        findings = res.findings
    except DeadlockError as e:
        findings = e.findings
    assert any(f.kind == "double-set" for f in findings)
    pairs = {_race_lines(f) for f in findings if f.kind == "race"}
    # WAR: the store of iteration i, then the load into the same buffer two iterations later
    assert (_line(src, "outs(%po :"), _line(src, "pto.tload")) in pairs


def test_d03_missing_drain_leaves_flag_set():
    bad = _blank(_src("d03_dyn_ids_pingpong"), "pto.wait_flag_dyn [#pto.pipe<PIPE_MTE3>, #pto.pipe<PIPE_MTE2>, %c6]")
    res = _run(bad, inputs=D03_IN, args={"arg2": 4})
    assert [f.kind for f in res.findings] == ["flag-left-set"]


def test_d04_barrier_branch_not_taken_races():
    src = _src("d04_barrier_in_if")
    res = _run(KERNELS / "d04_barrier_in_if.pto", inputs={"arg0": X8}, args={"arg3": True, "arg4": False})
    assert {_race_lines(f) for f in _races(res)} == {(_line(src, "outs(%po :"), _line(src, "ins(%po :"))}


def test_d04_missing_flag_in_else_arm():
    src = _src("d04_barrier_in_if")
    bad = _blank(src, "pto.wait_flag[<PIPE_V>, <PIPE_MTE3>, <EVENT_ID2>]")
    res = _run(bad, inputs={"arg0": X8}, args={"arg3": False, "arg4": True})
    assert (_line(src, "pto.tadds"), _line(src, "outs(%po :")) in {_race_lines(f) for f in _races(res)}


def test_d05_missing_mte3_to_s_flag_is_a_race():
    src = _src("d05_scalar_gm")
    bad = _blank(_blank(src, "pto.set_flag[<PIPE_MTE3>, <PIPE_S>"), "pto.wait_flag[<PIPE_MTE3>, <PIPE_S>")
    res = _run(bad, inputs={"arg0": X8})
    assert (_line(src, "outs(%po :"), _line(src, "pto.load_scalar")) in {_race_lines(f) for f in _races(res)}
