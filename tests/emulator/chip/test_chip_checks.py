"""Checking across cores: a missing sync.wait, a FIFO overrun, a pop with no push, a tile larger
than a slot, a free without a pop, two blocks storing the same window, a cross-core deadlock; and
the results (JSON cores, trace processes and cross-core arrows, CLI --blocks)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pyptoemu
from pyptoemu.errors import DeadlockError, FindingsError

from .kernels import c2v_loop, gm_handoff

ROOT = Path(__file__).resolve().parents[3]
RNG = np.random.default_rng(11)


def test_sync_set_wait_orders_a_gm_handoff_between_cube_and_vector_cores():
    x = RNG.standard_normal((16, 16)).astype(np.float32)
    r = pyptoemu.run(gm_handoff(), inputs={"arg0": x}, keep_log=True)
    np.testing.assert_array_equal(r.outputs["arg2"].reshape(16, 16), x + 1)
    assert r.findings == []
    waits = [i for c in r.chip.cores for i in c.trace_log if i.name == "sync.wait"]
    sets = [i for c in r.chip.cores for i in c.trace_log if i.name == "sync.set"]
    assert len(waits) == 2 and len(sets) == 1 and all(w.released_by == sets for w in waits)
    assert all(w.start >= sets[0].done for w in waits)


def test_missing_sync_wait_is_a_cross_core_race():
    x = RNG.standard_normal((16, 16)).astype(np.float32)
    r = pyptoemu.run(gm_handoff(wait=False), inputs={"arg0": x}, races="warn")
    races = [f for f in r.findings if f.kind == "race"]
    assert len(races) == 1 and races[0].count == 2  # both vector cores
    d = races[0].detail
    assert d["cross_core"] and d["buffer"] == "arg1"
    assert {d["first"]["core"], d["second"]["core"]} in ({"AIV0", "AIC0"}, {"AIV1", "AIC0"})
    with pytest.raises(AssertionError):  # and the numbers are wrong, as on hardware
        np.testing.assert_array_equal(r.outputs["arg2"].reshape(16, 16), x + 1)


def test_a_wait_nobody_sets_is_a_deadlock_naming_each_core_pipe_and_line():
    x = RNG.standard_normal((16, 16)).astype(np.float32)
    with pytest.raises(DeadlockError) as e:
        pyptoemu.run(gm_handoff(set_=False), inputs={"arg0": x})
    msg = str(e.value)
    for core in ("AIV0", "AIV1"):
        assert f"{core} pipe MTE2 blocked at <string>:32:5: sync.wait for cross-core signal id 0 from AIC0" in msg
    assert "deadlock" in {f.kind for f in e.value.findings}


def test_fifo_overrun_without_frees_blocks_the_producer_pipe_and_is_reported():
    x = np.zeros((32 * 10, 32), np.float32)
    with pytest.raises(DeadlockError) as e:
        pyptoemu.run(c2v_loop(10, 32, 1, free=False), inputs={"arg0": x}, args={"arg2": 320})
    msg = str(e.value)
    assert "AIC0 pipe MTE3 blocked at <string>:24:7: tpush_to_aiv for a free C2V slot: all 8 slots" in msg
    assert "AIV0 scalar unit (S) blocked at <string>:59:7: tpop_from_aic" in msg
    misuse = [f for f in e.value.findings if f.kind == "fifo-misuse"]
    assert misuse and "more pushes into the C2V FIFO than its 8 slots" in misuse[0].message


def test_frees_missing_with_fewer_tiles_than_slots_is_a_warning_at_the_end():
    x = RNG.standard_normal((32 * 3, 32)).astype(np.float32)
    r = pyptoemu.run(c2v_loop(3, 32, 1, free=False), inputs={"arg0": x}, args={"arg2": 96})
    np.testing.assert_array_equal(r.outputs["arg1"].reshape(-1, 32), 2 * x)
    assert [f.kind for f in r.findings] == ["fifo-misuse"] and "never freed" in r.findings[0].message


def test_pop_with_no_push_ever_deadlocks_naming_the_consumer():
    text = c2v_loop(2, 32, 1).replace("pto.tpush_to_aiv(", "// pto.tpush_to_aiv(")
    with pytest.raises(DeadlockError) as e:
        pyptoemu.run(text, inputs={"arg0": np.zeros((64, 32), np.float32)}, args={"arg2": 64})
    assert "no push into this FIFO ever ran" in str(e.value)
    assert any(f.kind == "fifo-misuse" and "no push into it ever ran" in f.message for f in e.value.findings)


def test_tile_larger_than_slot_and_free_without_pop_are_findings():
    x = RNG.standard_normal((32, 32)).astype(np.float32)
    with pytest.raises(FindingsError) as info:  # error findings: the run raises, carrying its result
        pyptoemu.run(c2v_loop(1, 32, 1, slot_size=2048), inputs={"arg0": x}, args={"arg2": 32})
    big = [f for f in info.value.findings if f.kind == "fifo-misuse"]
    assert big and "the tile is 4096 bytes but a C2V slot holds 2048" in big[0].message
    extra = c2v_loop(1, 32, 1).replace("pto.tfree_from_aic {split = 1}",
                                       "pto.tfree_from_aic {split = 1}\n      pto.tfree_from_aic {split = 1}")
    with pytest.raises(FindingsError) as info:
        pyptoemu.run(extra, inputs={"arg0": x}, args={"arg2": 32})
    r = info.value.result
    assert any(f.kind == "fifo-misuse" and "a free without a pop" in f.message for f in r.findings)
    np.testing.assert_array_equal(r.outputs["arg1"].reshape(-1, 32), 2 * x)


def test_full_and_empty_fifo_waits_show_in_the_trace_with_cross_core_arrows(tmp_path):
    x = RNG.standard_normal((32 * 12, 32)).astype(np.float32)
    trace = tmp_path / "t.json"
    mul = "pto.tmuls ins(%t, %two : !pto.tile_buf<vec, 16x32xf32>, f32) outs(%d : !pto.tile_buf<vec, 16x32xf32>)"
    slow = ("%onef = arith.constant 1.0 : f32\n" + "      pto.barrier <PIPE_V>\n      pto.tmuls ins(%d, %onef : "
            "!pto.tile_buf<vec, 16x32xf32>, f32) outs(%d : !pto.tile_buf<vec, 16x32xf32>)\n" * 40)
    text = c2v_loop(12, 32, 1).replace(mul, mul + "\n      " + slow)  # slow consumers: the FIFO fills up
    r = pyptoemu.run(text, inputs={"arg0": x}, args={"arg2": 384}, trace=trace)
    np.testing.assert_array_equal(r.outputs["arg1"].reshape(-1, 32), 2 * x)
    doc = json.loads(trace.read_text())
    procs = {e["pid"]: e["args"]["name"] for e in doc["traceEvents"] if e["name"] == "process_name"}
    assert [procs[p].split()[0] for p in sorted(procs)] == ["AIC0", "AIV0", "AIV1"]
    waits = [e for e in doc["traceEvents"] if e["ph"] == "X" and e["name"].startswith("tpush_to_aiv for a free")]
    assert waits and all(e["pid"] == 0 for e in waits)
    assert max(e["args"]["blocked_cycles"] for e in waits) > 0  # the producer's pipe really waited
    pops = [e for e in doc["traceEvents"] if e["ph"] == "X" and e["name"].startswith("tpop_from_aic")]
    assert pops and max(e["args"].get("blocked_cycles", 0) for e in pops) > 0  # and the consumer on empty (pops also show their MTE2 slot load)
    flows = [e for e in doc["traceEvents"] if e.get("cat") == "cross-core"]
    assert {e["pid"] for e in flows if e["ph"] == "s"} >= {0, 1, 2}  # pushes and slot releases


def test_cli_blocks_and_json_cores(tmp_path):
    cmd = [sys.executable, "-m", "pyptoemu.cli", "run", str(ROOT / "examples" / "vadd_32x32.pto"),
           "--blocks", "3", "--json", "--output-dir", str(tmp_path), "--races", "warn"]
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path,
                         env={"PYTHONPATH": ":".join(sys.path)}, check=False)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    one = pyptoemu.run(ROOT / "examples" / "vadd_32x32.pto")
    assert one.cycles <= doc["cycles"] < 2 * one.cycles  # makespan: the three blocks run side by side
    assert doc["pipes"]["V"]["busy_cycles"] == 3 * one.pipes["V"].busy_cycles  # sums over cores
    assert [(c["id"], c["kind"], c["block"]) for c in doc["cores"]] == [
        ("AIV0", "aiv", 0), ("AIV1", "aiv", 1), ("AIV2", "aiv", 2)]
    assert set(doc["cores"][0]["pipes"]) == {"S", "MTE1", "MTE2", "MTE3", "V", "M", "FIX"}
    # every block stores the same window: a race between cores, reported as a warning here
    assert [f["kind"] for f in doc["findings"]] == ["race"]
    bad = subprocess.run(cmd[:5] + ["--blocks", "0"], capture_output=True, text=True, cwd=tmp_path,
                         env={"PYTHONPATH": ":".join(sys.path)}, check=False)
    assert bad.returncode == 2 and "blocks must be a positive integer" in bad.stderr


def test_combined_core_notice_for_a_function_with_cube_and_vector_buffers():
    r = pyptoemu.run(ROOT / "tests" / "emulator" / "check" / "user_kernels" / "kernels" / "a12_acc_to_vec.pto",
                     args={"arg3": 1})
    assert [c.kind for c in r.cores] == ["combined"]
    assert any("combined core, which the a2a3 chip does not have" in n for n in r.notices)
    text = (ROOT / "tests" / "emulator" / "check" / "user_kernels" / "kernels" / "a12_acc_to_vec.pto").read_text()
    on_a5 = pyptoemu.run(text.replace('pto.target_arch = "a3"', 'pto.target_arch = "a5"'), args={"arg3": 1})
    assert any("combined core, which the a5 chip does not have" in n for n in on_a5.notices)


@settings(max_examples=20, deadline=None)
@given(blocks=st.integers(1, 30), tiles=st.integers(1, 10), cols=st.sampled_from([16, 32]),
       split=st.sampled_from([1, 2]), dir_mask=st.sampled_from([1, 3]),
       fault=st.sampled_from([None, None, "no_free", "shared_out"]))
def test_c2v_pipeline_over_blocks_shapes_depths_and_seeded_faults(blocks, tiles, cols, split, dir_mask, fault):
    """Against NumPy for every block count, tile shape, split and FIFO depth; a seeded fault is
    always reported: missing frees deadlock once the tiles outnumber the slots (else warn), and
    blocks storing the same window race unless there is only one block."""
    m = 32 * tiles * blocks
    x = RNG.standard_normal((m, cols)).astype(np.float32)
    text = c2v_loop(tiles, cols, split, dir_mask, free=fault != "no_free", shared_out=fault == "shared_out")
    slots = 8 if dir_mask == 1 else 4
    if fault == "no_free" and tiles > slots:
        with pytest.raises(DeadlockError) as e:
            pyptoemu.run(text, inputs={"arg0": x}, args={"arg2": m}, blocks=blocks)
        assert f"all {slots} slots hold tiles the consumer has not freed" in str(e.value)
        return
    r = pyptoemu.run(text, inputs={"arg0": x}, args={"arg2": m}, blocks=blocks, races="warn")
    kinds = {f.kind for f in r.findings}
    if fault == "shared_out":
        assert ("race" in kinds) == (blocks > 1)
        if blocks == 1:
            np.testing.assert_array_equal(r.outputs["arg1"].reshape(-1, cols)[: 32 * tiles], 2 * x)
        return
    np.testing.assert_array_equal(r.outputs["arg1"].reshape(-1, cols), 2 * x)
    assert kinds == ({"fifo-misuse"} if fault == "no_free" else set())
    assert len(r.cores) == 3 * min(blocks, 24)
