"""Race detector: no false positives on correct kernels, and every sync removal that unorders a
conflicting pair is reported (mutation tests over every hand-synchronised example)."""

from __future__ import annotations

import re

import pytest

import pyptoemu
from pyptoemu.errors import DeadlockError, FindingsError
from tests.conftest import EXAMPLES, _load_reference
from tests.emulator.check.hb_oracle import unordered_conflicts

REF = _load_reference()
EXPLICIT = sorted(n for n, s in REF.SYNC.items() if s == "explicit")
SYNC_LINE = re.compile(r"^\s*pto\.(set_flag|wait_flag|barrier|record_event|wait_event)\b")


def _run(text: str, name: str):
    """The run's result even when it ends with error findings (a double set is an error whatever
    ``races`` says, so pyptoemu.run raises FindingsError carrying the result)."""
    try:
        return pyptoemu.run(text, inputs=REF.make_inputs(name, seed=3), args=REF.ARGS.get(name, {}),
                            races="warn", sync="asis", keep_log=True)
    except FindingsError as e:
        return e.result


def _race_pairs(res) -> set[tuple]:
    return {frozenset((f.detail["first"]["line"], f.detail["second"]["line"]))
            for f in res.findings if f.kind == "race"}


@pytest.mark.parametrize("name", EXPLICIT)
def test_correct_examples_have_no_findings(name):
    text = (EXAMPLES / name).read_text()
    res = _run(text, name)
    assert res.findings == [], [str(f) for f in res.findings]
    assert unordered_conflicts(res.core) == set()


def _mutants(name: str):
    lines = (EXAMPLES / name).read_text().splitlines()
    for i, line in enumerate(lines):
        if SYNC_LINE.match(line):
            yield i + 1, "\n".join(lines[:i] + [""] + lines[i + 1:])


CASES = [(name, line, text) for name in EXPLICIT for line, text in _mutants(name)]


@pytest.mark.parametrize("name, line, text", CASES, ids=[f"{n}:{ln}" for n, ln, _ in CASES])
def test_removing_a_sync_op(name, line, text):
    """Removing one sync op: a race is reported exactly when the oracle finds an unordered
    conflicting pair (a removed set_flag leaves its wait unsatisfiable: a deadlock instead)."""
    try:
        res = _run(text.replace("<string>", name), name)
    except DeadlockError as e:
        assert "blocked" in str(e)
        removed = (EXAMPLES / name).read_text().splitlines()[line - 1]
        if "wait_flag" in removed:  # the next set finds the flag still set: reported before the hang
            assert any(f.kind == "double-set" for f in e.findings), str(e)
        else:
            assert "set_flag" in removed
        return
    oracle = {frozenset(p) for p in unordered_conflicts(res.core)}
    found = _race_pairs(res)
    assert found <= oracle, f"false positives: {found - oracle}"
    assert bool(found) == bool(oracle), f"missed races: {oracle}"
    if "wait_flag" in (EXAMPLES / name).read_text().splitlines()[line - 1]:
        assert any(f.kind in ("flag-left-set", "double-set") for f in res.findings) or found
