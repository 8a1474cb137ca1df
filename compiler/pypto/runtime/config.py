"""``pypto.runtime.RunConfig``: the run options of the current PyPTO surface (spec pypto-jit §10.1).

Only ``platform`` means something to the emulator: it selects the machine model (``a2a3``/``a2a3sim``
run on the A2/A3 chip, ``isa_specs/machines/a2a3.yaml``; ``a5``/``a5sim`` on the A5 (950) model,
``a5.yaml``: one combined core with A2/A3 timing, so SPMD blocks run one after another there) and is
part of a jit function's cache key, as is ``strategy``. ``trace`` (an emulator extension) names a
Chrome trace file; ``enable_chip_swimlane`` without ``trace`` writes ``swimlane.json`` into
``save_kernels_dir`` (or the working directory). Every other field is accepted for source
compatibility with hardware programs and has no effect here: ``device_id``, ``rtol``/``atol`` (harness
only), ``dump_passes``, ``save_kernels``, ``codegen_only`` (honoured by jit ``compile()``), the DFX
switches (``enable_dump_args``, ``enable_pmu``, ``enable_dep_gen``, ``enable_scope_stats``),
``compile_profiling``, ``diagnostic_phase``, ``disabled_diagnostics``, ``golden_data_dir``,
``aicpu_thread_num``, the ring sizes (validated as upstream does), ``distributed_config`` (multi-card
is not supported: a non-None value is rejected when the program runs), ``analyze_auto_scopes_for_deps``,
``memory_planner`` and ``dump_ptoas_passes``.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass
from typing import Any

from pypto.backend import backend_of_platform
from pypto.passes.manager import OptimizationStrategy

PLATFORMS = ("a2a3sim", "a2a3", "a5sim", "a5")
# The emulator's machine model of each platform (isa_specs/machines/<name>.yaml).
_MACHINE_OF_PLATFORM = {"a2a3sim": "a2a3", "a2a3": "a2a3", "a5sim": "a5", "a5": "a5"}


def _check_ring(name: str, value: Any, ok: Any, what: str) -> None:
    values = value if isinstance(value, (list, tuple)) else [value]
    if isinstance(value, (list, tuple)) and len(values) != 4:
        raise ValueError(f"RunConfig.{name}: give one value or 4 per-ring values, got {len(values)}")
    for v in values:
        if v is None or (isinstance(value, (list, tuple)) and v == 0):
            continue
        if not isinstance(v, int) or not ok(v):
            raise ValueError(f"RunConfig.{name}: {v!r} is not {what}")


def _pow2(v: int) -> bool:
    return v > 0 and v & (v - 1) == 0


@dataclass
class RunConfig:
    """How a program is compiled and run; see the module docstring for what the emulator honours."""

    platform: str = "a2a3sim"
    device_id: int = 0
    rtol: float = 1e-5
    atol: float = 1e-5
    strategy: Any = OptimizationStrategy.Default
    backend_type: Any = None
    dump_passes: Any = False
    save_kernels: bool = False
    save_kernels_dir: str | None = None
    codegen_only: bool = False
    enable_chip_swimlane: Any = 0
    enable_dump_args: bool = False
    enable_pmu: Any = 0
    enable_dep_gen: bool = False
    enable_scope_stats: bool = False
    compile_profiling: bool = False
    diagnostic_phase: Any = None
    disabled_diagnostics: Any = None
    golden_data_dir: str | None = None
    aicpu_thread_num: int | None = None
    ring_task_window: Any = None
    ring_heap: Any = None
    ring_dep_pool: Any = None
    distributed_config: Any = None
    analyze_auto_scopes_for_deps: bool = False
    memory_planner: Any = None
    dump_ptoas_passes: bool = False
    enable_l2_swimlane: Any = None
    trace: str | None = None

    def __post_init__(self) -> None:
        if self.platform not in PLATFORMS:
            raise ValueError(f"RunConfig.platform must be one of {', '.join(PLATFORMS)}, got {self.platform!r}")
        if self.enable_l2_swimlane is not None:
            warnings.warn("enable_l2_swimlane is deprecated; use enable_chip_swimlane", DeprecationWarning,
                          stacklevel=3)
            self.enable_chip_swimlane = self.enable_l2_swimlane
            self.enable_l2_swimlane = None
        if isinstance(self.enable_chip_swimlane, bool):
            self.enable_chip_swimlane = int(self.enable_chip_swimlane)
        if not isinstance(self.enable_chip_swimlane, int) or not 0 <= self.enable_chip_swimlane <= 4:
            raise ValueError(f"RunConfig.enable_chip_swimlane must be a bool or 0..4, got {self.enable_chip_swimlane!r}")
        _check_ring("ring_task_window", self.ring_task_window, lambda v: _pow2(v) and v >= 4, "a power of two >= 4")
        _check_ring("ring_heap", self.ring_heap, lambda v: _pow2(v) and v >= 1024, "a power of two >= 1024")
        _check_ring("ring_dep_pool", self.ring_dep_pool, lambda v: 4 <= v <= 2**31 - 1, "in [4, 2**31-1]")
        self.backend_type = backend_of_platform(self.platform)

    @property
    def machine(self) -> str:
        """The emulator's machine model for this platform: ``a2a3`` (the A2/A3 chip) or ``a5``."""
        return _MACHINE_OF_PLATFORM[self.platform]

    def trace_path(self) -> str | None:
        """Where the Chrome trace goes: ``trace``, or swimlane.json when ``enable_chip_swimlane`` is set."""
        if self.trace is not None:
            return self.trace
        if self.enable_chip_swimlane:
            return os.path.join(self.save_kernels_dir or ".", "swimlane.json")
        return None

    def cache_key(self) -> tuple:
        return (self.platform, str(self.strategy), self.distributed_config is not None,
                self.analyze_auto_scopes_for_deps, self.dump_ptoas_passes, str(self.memory_planner))
