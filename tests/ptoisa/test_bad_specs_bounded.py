"""Machine files: a YAML alias bomb and a zero bandwidth are located spec errors, not a hang or a
ZeroDivisionError in a timing formula."""

from __future__ import annotations

import re

import pytest

from ptoisa.errors import SpecError
from ptoisa.isa.yamldoc import load_yaml
from ptoisa.machine import isa_dir, load_machine

BOMB = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
    f"*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n"
    for i in range(8))


def test_a_yaml_alias_bomb_is_refused(tmp_path):
    path = tmp_path / "bomb.yaml"
    path.write_text(BOMB)
    with pytest.raises(SpecError, match=r"bomb.yaml:\d+:\d+: the YAML expands to more than \d+ nodes"):
        load_yaml(path)


@pytest.mark.parametrize("value", ["0", "-4", ".nan"])
def test_a_bandwidth_of_zero_is_a_located_spec_error(tmp_path, value):
    text = (isa_dir() / "machines" / "a2a3.yaml").read_text()
    text, n = re.subn(r"(\n\s*bw_gm_to_ub:\s*)[0-9.]+", rf"\g<1>{value}", text, count=1)
    assert n == 1
    path = tmp_path / "m.yaml"
    path.write_text(text)
    with pytest.raises(SpecError, match=r"m.yaml:\d+:\d+: machine 'a2a3': params.bw_gm_to_ub must be a positive "
                                        r"number"):
        load_machine(str(path))
