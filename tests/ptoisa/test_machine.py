"""The machine files and their loader."""

from __future__ import annotations

from pathlib import Path

import pytest

from ptoisa.machine import COST_KEYS, isa_dir, load_machine
from pyptoemu.errors import SpecError


def test_a2a3_numbers() -> None:
    m = load_machine()
    assert m.name == "a2a3" and m.clock_ghz == 1.85
    assert m.pipes == ("S", "MTE1", "MTE2", "MTE3", "V", "M", "FIX")
    assert m.in_order["V"] is False and all(m.in_order[p] for p in m.pipes if p != "V")
    sizes = {loc: (b.size, b.align) for loc, b in m.buffers.items()}
    assert sizes == {
        "vec": (196608, 32), "mat": (524288, 32), "left": (65536, 512), "right": (65536, 512),
        "acc": (131072, 64), "bias": (1024, 64), "scaling": (2048, 64),
    }
    assert m.event_ids == 8
    assert set(m.costs) == set(COST_KEYS) and m.costs["barrier_v"] == 16
    p = m.params
    # calibrated (machine-a2a3.md "Calibration data"): st tload 265 + bytes / 128, gemm GM -> L1
    # and L0C -> GM, st tmov 32 B/cycle UB -> UB
    assert (p["bw_gm_to_ub"], p["lat_gm_to_ub"], p["bw_gm_to_l1"], p["bw_ub_to_gm"]) == (128, 265, 98, 109)
    assert (p["bw_l1_to_l0a"], p["bw_l1_to_l0b"], p["bw_l0c_to_gm"], p["bw_l0c_to_l1"]) == (256, 128, 83, 74)
    assert p["bw_ub_to_ub"] == 32 and p["repeat_bytes"] == 256
    # the uncalibrated cost model stays reachable; its GM -> UB is 100.9 GiB/s at 1.85 GHz
    old = load_machine("a2a3:ptoisa_cost_model").params
    assert int(100.9 * 2**30 / 1.85e9) == old["bw_gm_to_ub"] == 58
    assert (old["bw_gm_to_l1"], old["bw_l0c_to_gm"], old["bw_ub_to_ub"], old["lat_gm_to_ub"]) == (78, 41, 594, 219)


def test_alternatives_and_cache() -> None:
    assert load_machine("a2a3:ascend910b2").clock_ghz == 1.8
    alt = load_machine("a2a3:cann_platform")
    assert alt.params["bw_gm_to_ub"] == 32 and alt.name == "a2a3:cann_platform"
    assert load_machine("a2a3") is load_machine()
    with pytest.raises(SpecError, match="no alternative 'nope'"):
        load_machine("a2a3:nope")


def test_a5_variant() -> None:
    m = load_machine("a5")
    assert m.buffers["vec"].size == 256 * 1024 and m.buffers["acc"].size == 256 * 1024
    assert m.in_order["V"] is True


def test_load_by_path() -> None:
    path = isa_dir() / "machines" / "a2a3.yaml"
    assert load_machine(str(path)).params == load_machine().params


def _bad(tmp_path: Path, old: str, new: str) -> SpecError:
    text = (isa_dir() / "machines" / "a2a3.yaml").read_text()
    assert old in text
    path = tmp_path / "bad.yaml"
    path.write_text(text.replace(old, new))
    with pytest.raises(SpecError) as info:
        load_machine(str(path))
    return info.value


def test_machine_errors(tmp_path: Path) -> None:
    assert "unknown pipe 'MTE7'" in _bad(tmp_path, "  FIX:  {in_order: true}", "  MTE7:  {in_order: true}").message
    assert "missing field 'event_ids'" in _bad(tmp_path, "event_ids: 8\n", "").message
    assert "unknown key 'colour'" in _bad(tmp_path, "event_ids: 8\n", "event_ids: 8\ncolour: 1\n").message
    err = _bad(tmp_path, "  barrier_v: 16 ", "  barrier_vv: 16 ")
    assert "barrier_vv" in err.message and err.loc.file.endswith("bad.yaml") and err.loc.line > 1
    assert "must be a number" in _bad(tmp_path, "bw_gm_to_ub: 128 ", "bw_gm_to_ub: fast ").message
    with pytest.raises(SpecError, match="no machine file"):
        load_machine("no_such_machine")
