"""Spec files are composed by libyaml when PyYAML has it: the same values and the same locations as
the pure-Python loader for every instruction and machine file, and a bad text is reported in the
pure loader's words."""

from __future__ import annotations

import math

import pytest
import yaml

from ptoisa.errors import SpecError
from ptoisa.isa import yamldoc
from ptoisa.machine import isa_dir

SPECS = sorted((isa_dir() / "instructions").glob("*.yaml")) + sorted((isa_dir() / "machines").glob("*.yaml"))


def _same(a, b, where: str) -> None:
    assert type(a) is type(b), where
    if isinstance(a, dict):
        assert list(a) == list(b) and a.loc == b.loc and a.key_locs == b.key_locs, where
        for k in a:
            _same(a[k], b[k], f"{where}/{k}")
    elif isinstance(a, list):
        assert len(a) == len(b) and a.loc == b.loc and a.item_locs == b.item_locs, where
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _same(x, y, f"{where}[{i}]")
    else:
        assert a == b or (isinstance(a, float) and math.isnan(a) and math.isnan(b)), where


def _pure(monkeypatch, path):
    monkeypatch.setattr(yamldoc, "_FAST_LOADER", None)
    try:
        return yamldoc.load_yaml(path)
    finally:
        monkeypatch.undo()


@pytest.mark.skipif(yamldoc._FAST_LOADER is None, reason="PyYAML built without libyaml")
def test_every_spec_file_loads_the_same_with_libyaml(monkeypatch):
    assert len(SPECS) > 10
    for path in SPECS:
        _same(yamldoc.load_yaml(path), _pure(monkeypatch, path), path.name)


@pytest.mark.parametrize("text", ["a: [1, 2\nb: 3\n", "a: b: c\n", "- x\ny: 1\n", "a: 'open\n", "a: *nope\n"])
def test_a_bad_yaml_text_is_reported_as_the_pure_loader_reports_it(monkeypatch, tmp_path, text):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(SpecError) as fast:
        yamldoc.load_yaml(path)
    monkeypatch.setattr(yamldoc, "_FAST_LOADER", None)
    with pytest.raises(SpecError) as pure:
        yamldoc.load_yaml(path)
    assert str(fast.value) == str(pure.value) and "bad.yaml:" in str(fast.value)


def test_the_composer_is_libyaml_when_pyyaml_has_it():
    assert yamldoc._FAST_LOADER is getattr(yaml, "CSafeLoader", None)
