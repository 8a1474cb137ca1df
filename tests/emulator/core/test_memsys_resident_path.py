"""SharedMemory.admit's path for GM resident in L2 (all of it fits: every transfer is served by L2,
with no fill and no HBM port) is the general path with the medium L2, only shorter: the same
transfers, sent once that way and once with the medium named outright (``(traffic, peak, "l2")``,
which takes the general path), stretch every instruction alike and leave the memory system in the
same state, float for float."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ptoisa.machine import load_machine
from pyptoemu.core.memsys import L2, SharedMemory
from pyptoemu.core.pipe import OP, make_instr

MACHINE = load_machine("a2a3")


def _resident() -> SharedMemory:
    """A memory system whose GM all fits in L2 (what ``start`` finds for a small kernel)."""
    m = SharedMemory(MACHINE.chip_spec(), MACHINE)
    m.started = m.fits = True
    return m


# (cycles after the previous start, pipe, occupancy, traffic bytes, peak bytes/cycle): transfers close
# together queue on the L2 server; peaks above the L2's share and tiny transfers hit float rounding
TRANSFERS = st.lists(st.tuples(st.integers(0, 400), st.sampled_from(["MTE2", "MTE3", "FIX"]),
                               st.integers(1, 3000), st.sampled_from([0.0, 1.0, 64.0, 21504.0, 65536.0, 1e7]),
                               st.sampled_from([1.0, 32.0, 109.0, 128.0, 4000.0, 1e6])),
                     min_size=1, max_size=40)


@settings(derandomize=True, deadline=None, max_examples=300)
@given(TRANSFERS)
def test_the_resident_path_is_the_general_path_with_l2(transfers):
    fast, general = _resident(), _resident()
    start = 0
    for gap, pipe, occ, traffic, peak in transfers:
        start += gap
        a = make_instr(OP, "t", None, pipe, 0, occ, occ + 7, nbytes=int(traffic), transfer=(traffic, peak))
        b = make_instr(OP, "t", None, pipe, 0, occ, occ + 7, nbytes=int(traffic), transfer=(traffic, peak, L2))
        fast.admit("c0", a, start)
        general.admit("c0", b, start)
        assert (a.occupancy, a.latency) == (b.occupancy, b.latency)
    for name in ("transfers", "bytes", "free_at", "port_free", "traffic", "stretched", "resident"):
        assert getattr(fast, name) == getattr(general, name), name
    assert not fast.fills and not general.fills
    assert {p: (h.bytes, h.occupancy) for p, h in fast.held.items()} == \
        {p: (h.bytes, h.occupancy) for p, h in general.held.items()}


def test_a_transfer_stretched_by_the_l2_server_is_held_back_alike():
    """Two big transfers at once: the L2 server fixes the second one's end on either path."""
    fast, general = _resident(), _resident()
    for m, medium in ((fast, ()), (general, (L2,))):
        for pipe in ("MTE2", "MTE3"):
            ins = make_instr(OP, "t", None, pipe, 0, 10, 10, nbytes=1 << 20, transfer=(float(1 << 20), 1e6, *medium))
            m.admit("c0", ins, 0)
    assert fast.stretched == general.stretched > 0
    assert {p: (h.bytes, h.occupancy) for p, h in fast.held.items()} == \
        {p: (h.bytes, h.occupancy) for p, h in general.held.items()} != {}
