"""Timing-only runs (``data=False`` / ``--no-data``): the same schedule and bit-identical cycles
as a run with data, races and data-independent faults still found, nothing generated or computed."""

from __future__ import annotations

from pathlib import Path

import pytest

import pyptoemu
from pyptoemu.cli import main
from pyptoemu.errors import BoundsError, InputError, KernelFault
from tests.emulator.core.kernels import binary_kernel, pview, vec

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples"
CASES = [
    ("vadd_32x32.pto", {}), ("double_buffer_1024.pto", {}), ("softmax_rows_64x128.pto", {}),
    ("matmul_splitk.pto", {"arg4": True}), ("softmax_nosync.pto", {"arg2": 128}),
    ("iter_args_accumulate.pto", {}),
]


def _schedule(res) -> list[tuple]:
    return [(i.name, i.pipe, i.issue, i.start, i.end, i.done) for i in res.core.trace_log]


@pytest.mark.parametrize(("name", "args"), CASES, ids=[c[0] for c in CASES])
def test_timing_only_run_has_the_same_schedule(name, args):
    with_data = pyptoemu.run(EXAMPLES / name, args=args, races="warn", keep_log=True)
    timing = pyptoemu.run(EXAMPLES / name, args=args, races="warn", data=False, keep_log=True)
    assert timing.cycles == with_data.cycles
    assert _schedule(timing) == _schedule(with_data)
    assert {p: s.busy_cycles for p, s in timing.pipes.items()} == {p: s.busy_cycles for p, s in with_data.pipes.items()}
    assert [str(f) for f in timing.findings] == [str(f) for f in with_data.findings]
    assert with_data.outputs and not timing.outputs
    assert all(gm.data is None for gm in timing.core.memory.gm.values())


def test_races_are_found_without_data():
    res = pyptoemu.run(EXAMPLES / "vadd_race.pto", races="warn", data=False)
    kinds = sorted(f.kind for f in res.findings)
    assert kinds == ["race", "uninitialised-read"]


def test_out_of_bounds_window_is_found_without_data():
    body = (f"    %t = pto.alloc_tile : {vec(16, 64)}\n"  # the offset is known only when it runs
            "    %blk = pto.get_block_idx\n    %b0 = arith.index_cast %blk : i64 to index\n"
            "    %o1 = arith.addi %b0, %c1 : index\n"
            "    %bad = pto.partition_view %v0, offsets = [%o1, %c0], sizes = [%cr, %cc] "
            f": !pto.tensor_view<?x?xf32> -> {pview(16, 64)}\n"
            f"    pto.tload ins(%bad : {pview(16, 64)}) outs(%t : {vec(16, 64)})")
    with pytest.raises(BoundsError, match="partition_view: dim 0 window"):
        pyptoemu.run(binary_kernel(body, nargs=1), data=False)


def test_a_huge_view_costs_nothing_without_data():
    """A 4 GiB view that the kernel reads one tile of: with data the emulator refuses to draw that
    many stand-in numbers; timing only it runs and times the one load."""
    tile = vec(16, 64)
    body = (f"    %t = pto.alloc_tile : {tile}\n"
            f"    pto.tload ins(%p0 : {pview(16, 64)}) outs(%t : {tile})")
    text = binary_kernel(body, nargs=1).replace("%cr = arith.constant 16", "%cr = arith.constant 16777216")
    text = text.replace("sizes = [%cr, %cc]", "sizes = [%c16, %cc]").replace(
        "%c1 = arith.constant 1 : index", "%c1 = arith.constant 1 : index\n    %c16 = arith.constant 16 : index")
    with pytest.raises(InputError, match="generates at most"):
        pyptoemu.run(text)
    res = pyptoemu.run(text, data=False)
    assert res.pipes["MTE2"].instructions == 1 and res.core.memory.gm[0].size == 16777216 * 64


def test_data_dependent_scalar_reads_stop_with_a_clear_error():
    kernel = ROOT / "tests/emulator/check/user_kernels/kernels/a05_scalar_getset.pto"
    with pytest.raises(InputError, match=r"a05_scalar_getset.pto:25:\d+: tgetval reads a value into the scalar unit; "
                                         r"a timing-only run \(--no-data\)"):
        pyptoemu.run(kernel, data=False)


def _faulting(body: str) -> str:
    t = vec(16, 64)
    return binary_kernel(f"""
    %x = pto.alloc_tile : {t}
    pto.tload ins(%p0 : {pview(16, 64)}) outs(%x : {t})
{body}
    pto.tstore ins(%x : {t}) outs(%p2 : {pview(16, 64)})""")


@pytest.mark.parametrize("data", [True, False], ids=["data", "timing-only"])
def test_a_window_leaving_its_source_faults_with_and_without_data(data):
    # the column is known only when it runs, block 0's index + 40 (a constant one, or one computed from
    # constants, is rejected before running: test_verify_red_team, test_verify_folding)
    body = (f"    %c20 = arith.constant 40 : index\n    %blk = pto.get_block_idx\n"
            f"    %b0 = arith.index_cast %blk : i64 to index\n    %c40 = arith.addi %b0, %c20 : index\n"
            f"    %a = pto.alloc_tile : {vec(16, 32)}\n"
            f"    pto.textract ins(%x, %c0, %c40 : {vec(16, 64)}, index, index) outs(%a : {vec(16, 32)})")
    with pytest.raises(BoundsError, match=r"<string>:\d+:5: textract: window at \(0, 40\) of 16x32 leaves the "
                                          r"16x64 source"):
        pyptoemu.run(_faulting(body), data=data)


@pytest.mark.parametrize("data", [True, False], ids=["data", "timing-only"])
def test_a_result_that_does_not_fit_its_tile_faults_with_and_without_data(data):
    body = (f"    %d = pto.alloc_tile : {vec(16, 32)}\n"
            f"    pto.tmov ins(%x : {vec(16, 64)}) outs(%d : {vec(16, 32)})")
    # on a5 (on a2a3 unequal static shapes are a tmov rule the verifier checks, §4.2 "(A3)")
    with pytest.raises(KernelFault, match=r"<string>:\d+:5: pto.tmov: result 16x64 does not fit tile 16x32"):
        pyptoemu.run(_faulting(body), data=data, machine="a5")


def test_a_timing_only_write_commits_only_while_it_has_something_to_note():
    """Timing only, a tile instruction's commit does nothing but note its written bytes (for the
    uninitialised-read check), so once its ranges are known written, or lie in GM (not followed),
    it queues no commit. A range not written yet must still be noted when it lands."""
    res = pyptoemu.run(EXAMPLES / "vadd_32x32.pto", data=False)
    memory = res.core.memory
    assert memory.writes_noted((("UB", 0, 4096, None),))  # written by the run
    assert memory.writes_noted((("arg2", 0, 4096, ("view",)),))  # GM: nothing to note
    assert not memory.writes_noted((("UB", 0, 4096, None), ("UB", 65536, 69632, None)))  # one never written
    assert not memory.writes_noted((("UB", 0, 8192, "other layout"),))  # known by its exact range only
    assert res.chip.commits.heap == []


def test_a_read_after_a_first_write_lands_is_not_uninitialised_without_data():
    """The first write of a UB range must be noted when it lands (its commit is not skipped): a
    later read of that range finds it written, timing only as with data."""
    tile = vec(16, 64)
    body = (f"    %t = pto.alloc_tile : {tile}\n    %u = pto.alloc_tile : {tile}\n"
            f"    pto.tload ins(%p0 : {pview(16, 64)}) outs(%t : {tile})\n"
            "    pto.set_flag[<PIPE_MTE2>, <PIPE_V>, <EVENT_ID0>]\n"
            "    pto.wait_flag[<PIPE_MTE2>, <PIPE_V>, <EVENT_ID0>]\n"
            f"    pto.tadd ins(%t, %t : {tile}, {tile}) outs(%u : {tile})\n"
            "    pto.set_flag[<PIPE_V>, <PIPE_MTE3>, <EVENT_ID0>]\n"
            "    pto.wait_flag[<PIPE_V>, <PIPE_MTE3>, <EVENT_ID0>]\n"
            f"    pto.tstore ins(%u : {tile}) outs(%p1 : {pview(16, 64)})")
    text = binary_kernel(body, nargs=2)
    timing = pyptoemu.run(text, data=False, races="warn")
    assert [str(f) for f in timing.findings] == [str(f) for f in pyptoemu.run(text, races="warn").findings] == []
    racy = text.replace("    pto.set_flag[<PIPE_V>, <PIPE_MTE3>, <EVENT_ID0>]\n", "").replace(
        "    pto.wait_flag[<PIPE_V>, <PIPE_MTE3>, <EVENT_ID0>]\n", "")  # the store reads before the add lands
    kinds = sorted(f.kind for f in pyptoemu.run(racy, data=False, races="warn").findings)
    assert kinds == ["race", "uninitialised-read"]


def test_cli_summary_says_a_timing_only_run_wrote_nothing_because_it_computed_nothing(capsys, tmp_path):
    """`--no-data` computes no outputs: the summary says so, instead of saying the kernel wrote no
    pointer argument (this kernel writes arg1), and nothing is saved."""


    rc = main(["run", str(EXAMPLES / "double_buffer_1024.pto"), "--no-data", "--output-dir", str(tmp_path)])
    out = capsys.readouterr().out
    assert rc == 0
    assert "outputs    (none: timing only, --no-data computes no data)" in out
    assert "wrote no pointer argument" not in out
    assert not list(tmp_path.iterdir())
