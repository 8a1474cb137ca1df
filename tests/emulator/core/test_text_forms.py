"""Kernels written in the other forms the corpus uses run and compute the right numbers: memref
level with the generic op form, legacy subview/tile_view/rank-only views and compact tile types,
an entry calling cube and vector functions with record_event/wait_event and dynamic event ids,
5-D views, DN column views, tcvt with a round mode, tci, block ids."""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np

import pyptoemu

FORMS = Path(__file__).parent / "forms"


def test_memref_level_with_generic_tmov():
    x = np.random.default_rng(0).random((16, 32), dtype=np.float32)
    r = pyptoemu.run(FORMS / "generic_memref.pto", inputs={"arg0": x})
    np.testing.assert_array_equal(r.outputs["arg1"].reshape(16, 32), x)


def test_legacy_views_and_compact_tiles():
    x = np.random.default_rng(1).random((32, 32), dtype=np.float32)
    r = pyptoemu.run(FORMS / "legacy.pto", inputs={"arg0": x})
    np.testing.assert_allclose(r.outputs["arg1"], x - x.max(axis=1, keepdims=True), rtol=1e-6)


def test_entry_calls_cube_then_vector_function():
    """The corpus pattern runs as a core group (issue 7): the cube function on the AIC and the
    vector function on both AIVs, concurrently, each core with its own flags and event ids."""
    a = np.random.default_rng(2).random((16, 16)).astype(np.float16)
    r = pyptoemu.run(FORMS / "cube_vec.pto", inputs={"arg0": a}, races="off")
    want = (a.astype(np.float32) @ a.astype(np.float32))
    np.testing.assert_allclose(r.outputs["arg1"].reshape(16, 16), want, rtol=1e-3)
    assert r.entry == "entry"
    assert [(c.id, c.kind) for c in r.cores] == [("AIC0", "aic"), ("AIV0", "aiv"), ("AIV1", "aiv")]
    assert r.pipes["M"].instructions == 1 and r.pipes["V"].instructions == 2
    # Nothing orders the vector cores' load of %c after the cube's store (a PIPE_ALL barrier is
    # per core), and both AIVs store the same window: the chip reports both.
    races = pyptoemu.run(FORMS / "cube_vec.pto", inputs={"arg0": a}, races="warn").findings
    cross = {(f.detail["first"]["op"], f.detail["second"]["op"]) for f in races if f.detail.get("cross_core")}
    assert cross == {("tstore", "tstore"), ("tload", "tstore")}


def test_5d_view_dn_column_tcvt_round_and_tci():
    x = np.random.default_rng(3).random(4096, dtype=np.float32)
    r = pyptoemu.run(FORMS / "misc.pto", inputs={"arg0": x})
    o = r.outputs
    assert o["arg2"].dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(o["arg2"].astype(np.float32).reshape(-1),
                                  x.astype(ml_dtypes.bfloat16).astype(np.float32))
    assert o["arg3"].reshape(-1).tolist() == list(range(5, 5 - 16, -1))
    np.testing.assert_array_equal(o["arg4"].reshape(-1), x.reshape(256, 16)[:, 3])
