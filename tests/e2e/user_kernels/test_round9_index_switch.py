"""scf.index_switch and scf.execute_region (pto-text-format §3.2: the assembler accepts both; absent from the
corpus) as MLIR lowering tools emit them: read as a chain of scf.if and as an scf.while that runs its body once
(kernels r9_k03, r9_k04)."""

from __future__ import annotations

import numpy as np
import pytest

import pyptoemu
from ptoisa.errors import PtoError
from tests.e2e.user_kernels.running import cli_json, run_clean


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


@pytest.mark.parametrize("kind", [0, 1, 2, 3, 7])
def test_an_index_switch_picks_the_case_and_an_execute_region_runs_once(kind, tmp_path):
    x = _rng(5).standard_normal((32, 64)).astype(np.float32)
    r = run_clean("r9_k03_index_switch_execute_region.pto", {"arg0": x}, {"arg2": kind, "arg3": 1})
    t = x[16:32]
    want = {0: np.maximum(t, 0) * 1, 1: np.exp(t) * 2, 3: -t * 3}.get(kind, t * 0.5 * 0.5)
    np.testing.assert_allclose(r.outputs["arg1"].reshape(32, 64)[16:32], want, rtol=1e-6)
    code, out = cli_json("r9_k03_index_switch_execute_region.pto", {"arg2": kind, "arg3": 1}, tmp_path, "--no-data")
    assert code == 0 and out["cycles"] == r.cycles, out


def test_an_index_switch_without_default_is_a_located_parse_error(tmp_path):
    bad = tmp_path / "switch.pto"
    bad.write_text("func.func @f(%k: index) {\n  scf.index_switch %k\n  case 1 {\n    scf.yield\n  }\n  return\n}\n")
    with pytest.raises(PtoError, match=r"switch.pto:6:3: expected 'default' and its region to end scf.index_switch"):
        pyptoemu.run(bad, args={"arg0": 1})


@pytest.mark.parametrize(("n", "want"), [(6, [111, 102]), (3, [102, 0]), (0, [0, 0])])
def test_nested_index_switches_without_results_and_with_negative_cases(n, want):
    r = run_clean("r9_k04_nested_index_switch_scalars.pto", {"arg0": np.zeros(2, np.int32)}, {"arg1": n})
    assert r.outputs["arg0"].tolist() == want
