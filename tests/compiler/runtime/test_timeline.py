"""A program's launches placed on the chip (pypto.runtime.timeline): independent launches overlap on
free cores, launches that share memory (one writing it) run one after another, a launch waits for
enough free cores, and a host access waits for the launches it depends on."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from ptoisa.machine import load_machine
from pypto.runtime.timeline import Timeline

A2A3 = load_machine("a2a3")


def cores(kind: str, *cycles: int) -> list:
    return [SimpleNamespace(kind=kind, cycles=c) for c in cycles]


def test_launches_on_disjoint_windows_of_one_tensor_overlap():
    t, y = Timeline(A2A3), np.zeros((32, 16), np.float32)
    assert t.launch([], [y[:16]], cores("aiv", 100), 100) == 0
    assert t.launch([], [y[16:]], cores("aiv", 120), 120) == 0
    assert t.end == 120


def test_a_read_waits_for_the_overlapping_write_and_a_write_for_earlier_reads():
    t, x, y = Timeline(A2A3), np.zeros((32, 16), np.float32), np.zeros((32, 16), np.float32)
    t.launch([x], [y[8:24]], cores("aiv", 100), 100)
    assert t.launch([y[16:]], [], cores("aiv", 50), 50) == 100  # reads rows the first one wrote
    assert t.launch([], [x], cores("aiv", 10), 10) == 100  # overwrites what the first one read
    assert t.launch([x], [], cores("aiv", 10), 10) == 110  # reads what the third one wrote
    assert t.end == 150


def test_reads_of_the_same_memory_do_not_order_launches():
    t, x = Timeline(A2A3), np.zeros((8, 8), np.float32)
    starts = [t.launch([x], [np.zeros(4, np.float32)], cores("aiv", 10), 10) for _ in range(3)]
    assert starts == [0, 0, 0]


def test_a_launch_waits_for_enough_free_cores_of_its_kind():
    t = Timeline(A2A3)
    aic = A2A3.chip_spec().count("aic")
    assert aic == 24  # isa_specs/machines/a2a3.yaml
    t.launch([], [np.zeros(4, np.float32)], cores("aic", *[200] * (aic - 1)), 200)
    # two more cube blocks: one core is free now, the second frees up at 200
    assert t.launch([], [np.zeros(4, np.float32)], cores("aic", 50, 50), 50) == 200
    # vector cores are a different pool
    assert t.launch([], [np.zeros(4, np.float32)], cores("aiv", 30), 30) == 0


def test_a_host_read_waits_for_the_writer_and_later_launches_wait_for_the_host():
    t, y = Timeline(A2A3), np.zeros((8, 8), np.float32)
    t.launch([], [y], cores("aiv", 100), 100)
    t.host_access(y[0], writes=False)
    assert t.host == 100
    assert t.launch([], [np.zeros(4, np.float32)], cores("aiv", 10), 10) == 100
