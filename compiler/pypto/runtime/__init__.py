"""``pypto.runtime``: run compiled programs on the emulator (spec pypto-jit §10).

``run`` (:mod:`pypto.runtime.runner`) compiles a program and runs it in place on the caller's arrays,
returning a callable that carries the emulator's one result type (:class:`pyptoemu.RunResult`);
``RunConfig`` (:mod:`pypto.runtime.config`) holds the run options of the current PyPTO surface.
"""

from __future__ import annotations

from pypto.runtime.config import RunConfig
from pypto.runtime.harness import execute_compiled
from pypto.runtime.runner import ProgramRun, default_entry, program_result, run
from pyptoemu.result import PipeStats, RunResult

__all__ = ["PipeStats", "ProgramRun", "RunConfig", "RunResult", "default_entry", "execute_compiled", "program_result",
           "run"]
