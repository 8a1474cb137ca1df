"""Fifteenth red-team round: kernels written with no sync op at all (kernels/r15_k0*; the first lines of
each say what it computes and which hazards automatic insertion must cover: the scalar unit reading and
writing tiles and GM around the pipes, GM read back after a store across a loop back edge, scf.if in a
loop, a tile yielded by scf.if), and the shipped examples with their sync stripped (chip kernels with
the C2V and V2C FIFOs, split-K on the cube, double buffering). Each runs with ``--sync auto`` (the
default for such a kernel) and ``--sync serial``, equal to NumPy; timing-only gives the same cycles and
bound; and the copy ``pyptoemu sync`` writes runs as written with the race check on, no finding and
the same cycles as the automatic run (the inserted sync is complete, and what auto runs)."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import numpy as np
import pytest

import pyptoemu
from pyptoemu.cli import main
from tests.e2e.user_kernels.running import KERNELS

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
SYNC_OPS = ("pto.set_flag", "pto.wait_flag", "pto.barrier")


def _ref(name: str, x: np.ndarray, y: np.ndarray, n: int) -> np.ndarray:
    """What each r15 kernel leaves in y (x, y: n x 64 f32)."""
    x, y = x.copy(), y.copy()
    if name.startswith("r15_k01"):
        a = x[:16].reshape(-1).copy()
        a[5] = 7.0
        b = a + a
        y[:16] = b.reshape(16, 64)
        y[0, 0] = b[5] + b[5]
    elif name.startswith("r15_k02"):
        x[0, 1] = 3.0
        y[:16] = x[:16] * 3
        y[0, 0] = y[0, 1] + 3
    elif name.startswith("r15_k03"):
        for r in range(0, n, 16):
            y[:16] = x[r:r + 16] + y[:16]
    elif name.startswith("r15_k04"):
        for r in range(0, n, 16):
            a = x[r:r + 16]
            y[r:r + 16] = (np.exp(a) if r % 64 == 0 else np.abs(a)) + a
    elif name.startswith("r15_k05"):
        y[:16] = (x[:16] if n > 16 else -x[:16]) + 1
    return y


R15 = sorted(p.name for p in KERNELS.glob("r15_k0*_nosync.pto"))
READS_DATA = ("r15_k01", "r15_k02")  # tgetval / load_scalar: no timing-only run (its values are not computed)


def _sync_file(src: Path, dst: Path) -> None:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert main(["sync", str(src), "-o", str(dst)]) == 0


def test_the_round15_kernels_are_there():
    assert len(R15) == 5


@pytest.mark.parametrize("n", [16, 64])
@pytest.mark.parametrize("name", R15)
def test_a_kernel_without_sync_matches_numpy_auto_and_serial(name, n):
    rng = np.random.default_rng(len(name) + n)
    x, y = (rng.standard_normal((n, 64)).astype(np.float32) for _ in range(2))
    want = _ref(name, x, y, n)
    for sync in ("auto", "serial"):
        r = pyptoemu.run(KERNELS / name, inputs={"arg0": x, "arg1": y}, args={"arg2": n}, sync=sync)
        assert (r.status, r.sync_mode, [str(f) for f in r.findings]) == ("ok", sync, [])
        np.testing.assert_allclose(r.outputs["arg1"], want, rtol=1e-6, atol=1e-6)
        if not name.startswith(READS_DATA):
            timing = pyptoemu.run(KERNELS / name, args={"arg2": n}, sync=sync, data=False)
            assert (timing.cycles, timing.bound, timing.findings) == (r.cycles, r.bound, [])


@pytest.mark.parametrize("name", R15)
def test_the_sync_written_by_pyptoemu_sync_runs_race_free_in_the_cycles_of_auto(tmp_path, name):
    synced = tmp_path / name
    _sync_file(KERNELS / name, synced)
    assert any(op in synced.read_text() for op in SYNC_OPS)
    auto = pyptoemu.run(KERNELS / name, args={"arg2": 64})
    written = pyptoemu.run(synced, args={"arg2": 64}, sync="asis", races="error")
    assert (written.sync_mode, written.findings) == ("asis", [])
    assert written.cycles == auto.cycles


STRIPPED = [  # (example, args, blocks): shipped kernels with hand-written sync
    ("matmul_c2v_epilogue", {"arg3": 128}, 4),  # cube -> vector FIFO, split = 1
    ("v2c_scale_matmul", {"arg3": 128}, 4),  # vector -> cube FIFO
    ("matmul_splitk", {"arg4": True}, 1),  # cube, tmatmul.acc in a loop, bias branch
    ("matmul_splitk", {"arg4": False}, 1),
    ("double_buffer_1024", {}, 1),
    ("softmax_rows_64x128", {}, 1),
    ("iter_args_accumulate", {}, 1),
]


@pytest.mark.parametrize(("example", "args", "blocks"), STRIPPED)
def test_an_example_with_its_sync_stripped_computes_the_same_with_auto_sync(tmp_path, example, args, blocks):
    text = (EXAMPLES / f"{example}.pto").read_text()
    bare = tmp_path / f"{example}_nosync.pto"
    bare.write_text("".join(line for line in text.splitlines(keepends=True)
                            if not line.lstrip().startswith(SYNC_OPS)))
    hand = pyptoemu.run(EXAMPLES / f"{example}.pto", args=args, blocks=blocks, output_dir=tmp_path / "hand")
    auto = pyptoemu.run(bare, args=args, blocks=blocks, output_dir=tmp_path / "auto")
    assert (auto.sync_mode, auto.status, auto.findings) == ("auto", "ok", [])
    assert auto.outputs.keys() == hand.outputs.keys()
    for k, v in hand.outputs.items():
        np.testing.assert_array_equal(auto.outputs[k], v)
    timing = pyptoemu.run(bare, args=args, blocks=blocks, data=False)
    assert (timing.cycles, timing.bound, timing.findings) == (auto.cycles, auto.bound, [])
    synced = tmp_path / f"{example}_synced.pto"
    _sync_file(bare, synced)
    written = pyptoemu.run(synced, args=args, blocks=blocks, sync="asis", races="error", data=False)
    assert (written.cycles, written.findings) == (auto.cycles, [])
