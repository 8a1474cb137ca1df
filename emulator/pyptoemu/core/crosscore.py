"""Cross-core state of a chip: cube<->vector FIFOs and cross-core signals (filled in below)."""

from __future__ import annotations


class CrossCore:
    def __init__(self, chip) -> None:
        self.chip = chip
        self.active = False  # any cross-core wait happened (deadlocks then name every core)

    def finish(self) -> None:
        """End-of-run checks."""
