"""Findings: what a run found wrong or suspicious, in one shape for the summary, JSON and trace.

A finding has a ``kind`` (``race``, ``deadlock``, ``double-set``, ``wait-never-set``,
``flag-left-set``, ``uninitialised-read``, ...), a ``severity`` (``error`` or
``warning``), a message and the source locations involved. Repeats of the same finding (same kind,
same source lines) are merged into one with a count, so a loop reports once, not per iteration.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pyptoemu.errors import Loc


@dataclass(slots=True)
class Finding:
    kind: str
    severity: str
    message: str
    locations: list[Loc] = field(default_factory=list)
    pipes: list[str] = field(default_factory=list)
    count: int = 1
    cycle: int = 0  # when it was first seen (for the trace)
    detail: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return {
            "kind": self.kind,
            "severity": self.severity,
            "message": self.message,
            "locations": [str(loc) for loc in self.locations],
            "pipes": list(self.pipes),
            "count": self.count,
            **({"detail": self.detail} if self.detail else {}),
        }

    def __str__(self) -> str:
        where = str(self.locations[0]) if self.locations else "<kernel>"
        times = f" (x{self.count})" if self.count > 1 else ""
        return f"{where}: {self.severity}: {self.kind}: {self.message}{times}"


class Findings:
    """Collects findings during a run, merging repeats."""

    def __init__(self) -> None:
        self.items: list[Finding] = []
        self._index: dict[tuple, Finding] = {}

    def add(self, kind: str, severity: str, message: str, locations: list[Loc], pipes: list[str] = (),
            cycle: int = 0, key: tuple | None = None, detail: dict | None = None) -> Finding:
        k = (kind, *(key if key is not None else tuple((loc.line, loc.col) for loc in locations)))
        hit = self._index.get(k)
        if hit is not None:
            hit.count += 1
            return hit
        f = Finding(kind, severity, message, list(locations), list(pipes), 1, cycle, detail or {})
        self._index[k] = f
        self.items.append(f)
        return f

    # Hooks called by the core ------------------------------------------------------------

    def double_set(self, flag: tuple, first, second) -> None:
        src, dst, eid = flag
        self.add("double-set", "error",
                 f"flag {src}->{dst} EVENT_ID{eid} set again at {second.loc} before a wait consumed the "
                 f"set from {first.loc}", [first.loc, second.loc], [src], cycle=max(second.start, 0),
                 key=(flag, first.loc.line, first.loc.col, second.loc.line, second.loc.col))

    def errors(self) -> list[Finding]:
        return [f for f in self.items if f.severity == "error"]

    def __iter__(self):
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)
