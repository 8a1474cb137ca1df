"""The chip's shared HBM/L2 model: fair shares, the per-core HBM port, L2 hits after the first touch."""

from __future__ import annotations

from pathlib import Path

import pyptoemu
from ptoisa.machine import load_machine
from pyptoemu.core.memsys import HBM, L2, SharedMemory
from pyptoemu.core.pipe import OP, Instr, make_instr

MACHINE = load_machine("a2a3")
P = MACHINE.chip_spec().shared
FIXED = 265
ROOT = Path(__file__).resolve().parents[3]


def _fresh() -> SharedMemory:
    return SharedMemory(MACHINE.chip_spec(), MACHINE)


def _load(core, row: int, nbytes: int = 65536, name: str = "arg0") -> Instr:
    """A GM -> UB load of one contiguous window of ``nbytes`` f32 at window index ``row``."""
    elems = nbytes // 4
    ins = make_instr(OP, "tload", None, "MTE2", 0, FIXED + nbytes // 128, FIXED + nbytes // 128,
                reads=((name, row * nbytes, (row + 1) * nbytes, (row * elems, (1, elems), (elems, 1))),),
                writes=(("UB", 0, nbytes, None),))
    ins.transfer = (float(nbytes), 128.0)
    return ins


def test_one_core_reading_cold_data_streams_at_its_hbm_port():
    bw = _fresh()
    ins = _load("c0", 0)
    bw.admit("c0", ins, 0)
    assert ins.occupancy == FIXED + 65536 // 32  # 32 B/cycle: one core's port to HBM
    assert bw.traffic[HBM] == 65536


def test_a_second_read_of_the_same_lines_hits_l2():
    bw = _fresh()
    bw.admit("c0", _load("c0", 0), 0)
    again = _load("c1", 0)
    bw.admit("c1", again, 10_000)
    assert again.occupancy == FIXED + 65536 // 128 and bw.traffic[L2] == 65536


def test_48_cores_share_hbm_fairly_and_each_slows_down():
    bw = _fresh()
    loads = [_load(f"c{k}", k) for k in range(48)]
    for k, ins in enumerate(loads):
        bw.admit(f"c{k}", ins, 0)
    last = loads[-1]
    share = P["hbm_bw"] / 48  # 16.7 B/cycle, below the 32 B/cycle port
    assert abs((last.occupancy - FIXED) - 65536 / share) <= 1
    assert last.occupancy > FIXED + 65536 // 32  # slower per core than one core alone


def test_two_streams_of_one_core_share_its_port():
    bw = _fresh()
    a, b = _load("c0", 0), _load("c0", 1)
    bw.admit("c0", a, 0)
    bw.admit("c0", b, 0)
    assert abs((b.occupancy - FIXED) - 65536 / 16) <= 1


def test_a_transfer_that_starts_after_the_others_ended_is_alone_again():
    bw = _fresh()
    for k in range(8):
        bw.admit(f"c{k}", _load(f"c{k}", k), 0)
    late = _load("c9", 20)
    bw.admit("c9", late, 1_000_000)
    assert late.occupancy == FIXED + 65536 // 32


class _GM:
    def __init__(self, name: str, size: int) -> None:
        import numpy as np

        self.name, self.size, self.dtype = name, size, np.dtype(np.float32)


class _Core:
    def __init__(self, sizes: dict[str, int]) -> None:
        self.memory = type("M", (), {"gm": {k: _GM(k, v) for k, v in sizes.items()}})()


def test_gm_that_fits_in_l2_starts_there_and_larger_gm_starts_in_hbm():
    small, big = _Core({"arg0": 1 << 20}), _Core({"arg0": P["l2_bytes"]})
    bw = _fresh()
    ins = _load(small, 0)
    bw.admit(small, ins, 0)
    assert ins.occupancy == FIXED + 65536 // 128  # hot in L2, as the calibration figures were measured
    bw = _fresh()
    ins = _load(big, 0)
    bw.admit(big, ins, 0)
    assert ins.occupancy == FIXED + 65536 // 32


def _copy_kernel(side: int, burst: int, ub: int) -> str:
    import importlib.util
    import sys

    path = Path(__file__).resolve().parents[3] / "benchmarks" / "kernels" / "streams.py"
    spec = importlib.util.spec_from_file_location("bench_streams", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("bench_streams", module)
    spec.loader.exec_module(module)
    return module.copy_kernel(side, burst, ub)


def test_a_48_core_copy_slows_down_per_core():
    """The published GM -> UB copy (12288^2 fp16, 128 KiB tiles; 288 MiB, more than L2 holds) on 1
    core and on 48: one core streams at its HBM port (32 B/cycle), 48 share HBM (800 B/cycle, 16.7
    each), so each core's loads take longer while the chip as a whole moves more."""
    text = _copy_kernel(12288, 131072, 131072)
    one = pyptoemu.run(text, blocks=1, data=False, races="off")
    many = pyptoemu.run(text, blocks=48, data=False, races="off")
    per_load_one = one.pipes["MTE2"].busy_cycles / one.pipes["MTE2"].instructions
    per_load_many = many.pipes["MTE2"].busy_cycles / many.pipes["MTE2"].instructions
    assert abs(per_load_one - (FIXED + 131072 / P["hbm_core_bw"])) <= 3
    assert per_load_many > 1.7 * per_load_one
    moved = 12288 * 12288 * 2
    assert moved / one.cycles < P["hbm_core_bw"]
    assert 0.9 * P["hbm_bw"] < moved / many.cycles <= P["hbm_bw"]


def test_a_read_of_lines_still_being_fetched_waits_for_that_fill():
    """Two cores read the same cold lines at the same cycle while HBM is busy with 47 other cores'
    loads: the first fetches them from HBM, the second merges with that miss in flight and cannot
    end before HBM has delivered them (red team: it counted as an L2 hit at admission, ending at
    777 cycles while HBM had not moved the lines yet)."""
    bw = _fresh()
    for k in range(47):
        bw.admit(f"c{k + 2}", _load(f"c{k + 2}", k + 1), 0)
    first, second = _load("c0", 0), _load("c1", 0)
    bw.admit("c0", first, 0)
    bw.admit("c1", second, 0)
    delivered = FIXED + 48 * 65536 / P["hbm_bw"]  # HBM serves the 48 loads' bytes in order
    assert second.occupancy >= delivered - 1
    assert bw.traffic[HBM] == 48 * 65536 and bw.traffic[L2] == 65536  # fetched once, then served from L2


def test_a_read_after_the_fill_landed_is_a_plain_l2_hit():
    bw = _fresh()
    first = _load("c0", 0)
    bw.admit("c0", first, 0)
    later = _load("c1", 0)
    bw.admit("c1", later, first.occupancy)
    assert later.occupancy == FIXED + 65536 // 128


def test_a_fill_is_waited_for_only_by_reads_of_its_own_lines_and_only_until_it_lands():
    bw = _fresh()
    for k in range(47):
        bw.admit(f"c{k + 2}", _load(f"c{k + 2}", k + 1), 0)
    bw.admit("c0", _load("c0", 0), 0)  # fetching window 0 behind 47 others on HBM
    assert len(bw.fills) == 48
    other = _load("c1", 3)  # window 3: fetched by another core, in flight too
    same = _load("c1", 0)
    bw.admit("c1", same, 0)
    assert same.occupancy > FIXED + 48 * 65536 / P["hbm_bw"] - 1  # waits for window 0's fill
    bw.admit("c1", other, 0)
    assert other.occupancy < same.occupancy  # window 3 was fetched earlier, so it lands earlier
    later = _load("c1", 0)
    bw.admit("c1", later, 10**6)
    assert later.occupancy == FIXED + 65536 // 128 and not bw.fills  # delivered: dropped, a plain hit


def test_what_sharing_held_back_is_kept_per_pipe_as_granted():
    """48 cores loading cold lines at once: HBM (not their own peak nor their port) fixes the end of
    most of the loads, and ``held_back`` gives the rate granted to those (bytes over the MTE2 cycles
    they took) and names HBM. One core alone is held by its own port only: nothing is kept."""
    alone = _fresh()
    ins = _load("c0", 0)
    alone.admit("c0", ins, 0)
    assert ins.occupancy > FIXED + 65536 // 128  # slowed, by its port
    assert alone.held == {} and alone.held_back({"MTE2": ins.occupancy}, 1) == {}
    bw = _fresh()
    loads = [_load(f"c{k}", k) for k in range(48)]
    for k, ins in enumerate(loads):
        bw.admit(f"c{k}", ins, 0)
    held = [ins for ins in loads if ins.occupancy > FIXED + 65536 / P["hbm_core_bw"]]
    assert len(held) >= 23  # HBM serves 25 ports at 32 B/cycle: (about) the 25 first keep their port speed
    rate = len(held) * 65536 / sum(ins.occupancy for ins in held)
    busy = sum(ins.occupancy for ins in loads)
    ((pipe, (got, medium, cores)),) = bw.held_back({"MTE2": busy}, 48).items()
    assert (pipe, medium, cores) == ("MTE2", HBM, 48)
    assert abs(got - rate) < 1e-9
    # held transfers that make up less than half of the pipe's busy cycles are not named
    assert bw.held_back({"MTE2": 3 * busy}, 48) == {}


def test_a_transfer_no_server_held_is_not_stretched_by_float_rounding():
    """One core streaming 64x64 f32 tiles: L2 (3243 B/cycle) never holds a transfer below its own
    peak, so no transfer may be stretched. Before ROUNDING, ``end - begin - stream`` of an
    unstretched transfer could come out as 1e-13 and its ceil added a cycle: 88 of the 256 tstores."""
    res = pyptoemu.run(ROOT / "examples" / "double_buffer_1024.pto", races="off", data=False)
    assert res.chip.memsys.transfers == 512 and res.chip.memsys.stretched == 0


def test_the_port_bound_transfer_at_the_hbm_boundary_is_not_counted_as_held():
    """The 25th of 48 cold 64 KiB loads at once ends when HBM has served 25 x 64 KiB at 800 B/cycle:
    2048 cycles, exactly when its own 32 B/cycle port is done too. It takes the port's 2048 cycles
    and is not counted as held by HBM (the float sum of the server's timeline is 2048 + 1e-13)."""
    bw = _fresh()
    loads = [_load(f"c{k}", k) for k in range(48)]
    for k, ins in enumerate(loads):
        bw.admit(f"c{k}", ins, 0)
    assert [ins.occupancy - FIXED for ins in loads[23:26]] == [2048, 2048, 2130]
    assert bw.held["MTE2"].bytes[HBM] == 23 * 65536
