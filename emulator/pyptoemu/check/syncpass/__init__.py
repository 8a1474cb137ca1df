"""Automatic synchronisation insertion, split by concern.

* :mod:`.model` - what each op does to memory: its pipe and the footprints (tile byte ranges, GM
  element ranges) it reads and writes; the SSA tracing that decides what aliases what.
* :mod:`.plan` - the happens-before oracle (vector clocks over a twice-unrolled walk of the
  function) and the greedy placement of set/wait pairs and barriers; event-id allocation.
* :mod:`.emit` - stripping existing sync ops and materialising the plan as new AST regions.

The public entry points live in :mod:`pyptoemu.check.autosync`.
"""
