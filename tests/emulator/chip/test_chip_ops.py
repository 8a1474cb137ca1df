"""get_buf / rls_buf order pipes that hold the same buffer id (granted in program order), and an
async GM put lands in GM."""

from __future__ import annotations

from pathlib import Path

import numpy as np

import pyptoemu

FORMS = Path(__file__).parent / "forms"


def test_get_buf_orders_load_vector_op_and_store_without_flags():
    x = np.arange(256, dtype=np.float32).reshape(16, 16)
    r = pyptoemu.run(FORMS / "get_buf_order.pto", inputs={"arg0": x}, keep_log=True)
    np.testing.assert_array_equal(r.outputs["arg1"].reshape(16, 16), x + 1)
    assert r.findings == []
    log = r.core.trace_log
    load, add = (next(i for i in log if i.name == n) for n in ("tload", "tadds"))
    assert add.start >= load.done  # the vector pipe waited for the load's release of id 0


def test_without_the_vector_get_buf_the_load_and_add_race():
    text = (FORMS / "get_buf_order.pto").read_text()
    text = text.replace("pto.get_buf [#pto.pipe_event_type<TVEC>, 0]", "").replace(
        "pto.rls_buf [#pto.pipe_event_type<TVEC>, 0]", "")
    x = np.arange(256, dtype=np.float32).reshape(16, 16)
    r = pyptoemu.run(text, inputs={"arg0": x}, races="warn")
    assert any(f.kind == "race" and f.detail["kind"] == "RAW" for f in r.findings)


def test_async_put_copies_gm():
    x = np.random.default_rng(3).standard_normal(128).astype(np.float32)
    r = pyptoemu.run(FORMS / "async_put.pto", inputs={"arg1": x})
    np.testing.assert_array_equal(r.outputs["arg0"].reshape(-1), x)
    assert r.findings == []
