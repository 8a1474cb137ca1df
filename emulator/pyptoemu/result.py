"""The one result type of a run, shared by ``pyptoemu.run`` and ``pypto.runtime.run``.

A run that faults still has a result (the cycles and findings up to the fault, the trace path):
:class:`pyptoemu.KernelFault` carries it as ``.result``. ``to_json`` is the CLI's ``--json`` object,
so the Python and command-line views of a run cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pyptoemu.check.findings import Finding

PIPE_ORDER = ("S", "MTE1", "MTE2", "MTE3", "V", "M", "FIX")


@dataclass(slots=True)
class PipeStats:
    """Cycles a pipe was held (``busy_cycles``) and how many instructions it ran."""

    busy_cycles: int
    instructions: int

    def to_json(self) -> dict:
        return {"busy_cycles": self.busy_cycles, "instructions": self.instructions}


@dataclass(slots=True)
class CoreStats:
    """One core of the chip that ran at least one block (``cycles``: when its last block finished)."""

    id: str
    kind: str
    blocks: list[int]
    cycles: int
    pipes: dict[str, PipeStats]

    def to_json(self) -> dict:
        return {"id": self.id, "kind": self.kind, "block": self.blocks[0] if self.blocks else None,
                "blocks": list(self.blocks), "cycles": self.cycles,
                "pipes": {p: st.to_json() for p, st in self.pipes.items()}}


def bound_of(pipes: Mapping[str, PipeStats]) -> str:
    """The busiest pipe (ties go to the earlier pipe in :data:`PIPE_ORDER`)."""
    order = [p for p in PIPE_ORDER if p in pipes] + [p for p in pipes if p not in PIPE_ORDER]
    return max(order, key=lambda p: (pipes[p].busy_cycles, -order.index(p)))


@dataclass(slots=True, repr=False, eq=False)
class RunResult:
    """What a run produced.

    ``outputs``: for a ``.pto`` kernel (``pyptoemu.run``), each pointer argument the kernel wrote, by
    name (``{"arg2": array}``); for a PyPTO program (``pypto.runtime.run``), the entry's return
    values in order (a tuple), with every tensor argument after the run by parameter name in
    ``arrays``. ``findings`` hold races, deadlocks and the fault that stopped a faulted run.
    ``status``: ``"ok"``; ``"findings"`` (the run completed with error findings, such as a race);
    ``"faulted"`` (the run stopped at a fault; ``outputs`` is empty). ``bound_pipe`` is the pipe that
    holds most of the critical path and ``bound`` says why in words (a program's cycles are its
    launches' schedule on the chip, so its ``bound_pipe`` is the busiest pipe and ``bound`` is empty).
    """

    entry: str
    cycles: int
    time_us: float
    pipes: dict[str, PipeStats]
    bound_pipe: str  # the pipe with the largest share of the critical path (else the busiest)
    outputs: Any
    findings: list[Finding]
    trace: str | None = None
    bound: str = ""  # the bottleneck from the critical path, e.g. "MTE2-bound: 78% of the makespan ..."
    cores: list[CoreStats] = field(default_factory=list)
    machine: str = ""
    status: str = "ok"
    sync_mode: str = "asis"
    notices: list[str] = field(default_factory=list)
    printed: list[str] = field(default_factory=list)
    instructions: int = 0
    launches: int = 1
    traces: list[str] = field(default_factory=list)
    arrays: dict[str, np.ndarray] = field(default_factory=dict)
    blocks: int = 1
    core: Any = None  # the first simulated core, for tools that need its raw event log (race checks, traces)
    chip: Any = None  # the simulated chip
    # (launch_kernel, launch_block) cycles of the machine: the kernel launch and the first wave's block
    # dispatch, before cycle 0 (later waves' dispatch is inside ``cycles``: core/chip.py)
    launch: tuple[int, int] = (0, 0)

    @property
    def faulted(self) -> bool:
        return self.status == "faulted"

    @property
    def hardware_cycles(self) -> int:
        """The kernel's time on hardware, in cycles: the simulated ``cycles`` plus the launch (what a
        kernel time measured on the board includes)."""
        return self.cycles + sum(self.launch)

    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "error"]

    def to_json(self, output_paths: Mapping[str, str] | None = None) -> dict:
        """The ``--json`` object: ``output_paths`` are where the CLI saved the outputs."""
        return {
            "status": self.status,
            "entry": self.entry, "cycles": self.cycles, "time_us": self.time_us,
            "pipes": {p: self.pipes[p].to_json() for p in PIPE_ORDER if p in self.pipes},
            "bound_pipe": self.bound_pipe, "bound": self.bound, "blocks": self.blocks, "cores": [c.to_json() for c in self.cores],
            "outputs": dict(output_paths or {}), "trace": self.trace,
            "findings": [f.to_json() for f in self.findings],
            "machine": self.machine, "sync": self.sync_mode,
            "launch_cycles": {"kernel": self.launch[0], "block": self.launch[1]},
            "hardware_cycles": self.hardware_cycles,
        }

    def __repr__(self) -> str:
        errors = len(self.errors())
        kinds = sorted({f.kind for f in self.findings})
        findings = f"{len(self.findings)} ({errors} errors: {', '.join(kinds)})" if self.findings else "none"
        return (f"RunResult(entry={self.entry!r}, status={self.status!r}, cycles={self.cycles}, "
                f"time_us={self.time_us:.3f}, bound_pipe={self.bound_pipe!r}, outputs={_describe(self.outputs)}, "
                f"findings={findings}, trace={self.trace!r})")


def _describe(outputs: Any) -> str:
    """Shapes and dtypes instead of array dumps."""
    def one(a: Any) -> str:
        if isinstance(a, np.ndarray):
            return f"{a.dtype}{list(a.shape)}"
        return type(a).__name__ if a is not None else "None"

    if isinstance(outputs, Mapping):
        return "{" + ", ".join(f"{k!r}: {one(v)}" for k, v in outputs.items()) + "}"
    if isinstance(outputs, tuple):
        return "(" + ", ".join(one(v) for v in outputs) + ("," if len(outputs) == 1 else "") + ")"
    return one(outputs)


__all__ = ["PIPE_ORDER", "CoreStats", "PipeStats", "RunResult", "bound_of"]
