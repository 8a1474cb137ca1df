"""make_instr fills every field of an Instr (which has no __init__ of its own)."""
from __future__ import annotations

import pytest

from pyptoemu.core.pipe import OP, Instr, make_instr

# written before read, by ScalarUnit.issue: ``low`` on every issue, ``stall_*`` on an issue that holds a
# stall (pipe.DeferredStall), the one path that reads them
SET_ONLY_WHEN_NEEDED = {"low", "stall_lag", "stall_made_by", "stall_taken", "stall_watch"}


def test_every_slot_but_those_of_issue_is_set() -> None:
    ins = make_instr(OP, "tadd", None, "V", 7)
    for slot in Instr.__slots__:
        if slot in SET_ONLY_WHEN_NEEDED:
            with pytest.raises(AttributeError):
                getattr(ins, slot)
        else:
            getattr(ins, slot)  # raises AttributeError if make_instr forgot it


def test_arguments_land_in_their_fields() -> None:
    bound, reads, writes, flag, snaps = object(), (("UB", 0, 4, None),), (("UB", 4, 8, None),), ("V", "M", 1), [1]
    ins = make_instr(OP, "tadd", None, "V", 7, 3, 5, bound, reads, writes, flag, snaps, 64, (64.0, 1.0), "k")
    got = (ins.kind, ins.name, ins.loc, ins.pipe, ins.issue, ins.occupancy, ins.latency, ins.bound, ins.reads,
           ins.writes, ins.flag, ins.operands, ins.nbytes, ins.transfer, ins.key)
    assert got == (OP, "tadd", None, "V", 7, 3, 5, bound, reads, writes, flag, snaps, 64, (64.0, 1.0), "k")
    assert (ins.start, ins.end, ins.done, ins.seq, ins.wait_start, ins.pidx) == (-1,) * 6
    assert (ins.sepoch, ins.iseq) == (0, 0)
    assert (ins.released_by, ins.core, ins.vc, ins.path) == (None,) * 4
