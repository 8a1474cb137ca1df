"""Pass manager and the named strategies (spec §6.2)."""

from __future__ import annotations

import enum
import os
from typing import Any

from pypto.ir.printer import python_print
from pypto.ir.stmt import Program
from pypto.ir.verifier import verify
from pypto.passes.allocate_memory_addr import AllocateMemoryAddrPass
from pypto.passes.base import Pass
from pypto.passes.checks import check_orchestration
from pypto.passes.chunk_loops import InterchangeChunkLoopsPass, SplitChunkedLoopsPass
from pypto.passes.convert_tensor_to_block_ops import ConvertTensorToBlockOpsPass
from pypto.passes.convert_to_ssa import ConvertToSSAPass
from pypto.passes.expand_library_ops import ExpandLibraryOpsPass
from pypto.passes.expand_power2 import ExpandPower2Pass
from pypto.passes.fuse_loops import FuseLoopsPass
from pypto.passes.init_memref import InitMemRefPass
from pypto.passes.insert_sync import InsertSyncPass
from pypto.passes.materialize_tile_views import MaterializeTileViewsPass
from pypto.passes.memory_reuse import MemoryReusePass
from pypto.passes.outline_incore_scopes import OutlineIncoreScopesPass
from pypto.passes.outline_tensor_ops import OutlineTensorOpsPass
from pypto.passes.split_cube_vector import SplitCubeVectorPass
from pypto.passes.split_sections import SplitSectionsPass
from pypto.passes.unroll_loops import UnrollLoopsPass


class OptimizationStrategy(enum.Enum):
    Default = "Default"
    PTOAS = "PTOAS"


# UnrollLoops follows ConvertToSSA (see its module docstring); outlining precedes the tensor-to-block
# conversion so that tensor ops written inside `with pl.incore():` are converted in the new kernel.
# OutlineTensorOps follows it: the parents of outlined scopes are Orchestration by then, and their
# computing tensor ops become kernels the same way. SplitCubeVector then cuts every kernel that mixes
# a tensor-level matmul with vector ops into cube and vector kernels, before either kind is lowered.
# FuseLoops needs block-level loops and outlined kernels, and runs before memory is planned;
# ExpandPower2 follows it so that two fused power-of-two loops are expanded once, chunk by chunk.
# SplitSections needs every tile's memory (InitMemRef) to cut a group kernel into its cube and vector
# sections, and precedes the memory and sync planning, which treat each section as one core's code.
# The library ops of a kernel are expanded into tile loops over views, which become loads and stores
# once the kernel boundary is known (seed 003 §2); ConvertTensorToBlockOps handles what is left (matmul).
_FRONT = (ConvertToSSAPass, UnrollLoopsPass, SplitChunkedLoopsPass, InterchangeChunkLoopsPass, OutlineIncoreScopesPass,
          OutlineTensorOpsPass, SplitCubeVectorPass, ExpandLibraryOpsPass, MaterializeTileViewsPass, ConvertTensorToBlockOpsPass,
          FuseLoopsPass, ExpandPower2Pass)
STRATEGIES: dict[OptimizationStrategy, tuple[type, ...]] = {
    OptimizationStrategy.Default: (*_FRONT, InitMemRefPass, SplitSectionsPass, MemoryReusePass, InsertSyncPass,
                                   AllocateMemoryAddrPass),
    OptimizationStrategy.PTOAS: (*_FRONT, InitMemRefPass, SplitSectionsPass, MemoryReusePass, AllocateMemoryAddrPass),
}

# Properties that hold after each pass (checked by the verifier when verify_each is on).
_SPLIT = {"TypeChecked", "SSAForm", "SplitIncoreOrch"}
_BLOCK = {"TypeChecked", "SplitIncoreOrch", "IncoreBlockOps"}
PRODUCES = {
    "convert-to-ssa": {"TypeChecked", "SSAForm"},
    "unroll-loops": {"TypeChecked", "SSAForm"},
    "split-chunked-loops": {"TypeChecked", "SSAForm"},
    "interchange-chunk-loops": {"TypeChecked", "SSAForm"},
    "outline-incore-scopes": _SPLIT,
    "outline-tensor-ops": _SPLIT,
    "split-cube-vector": _SPLIT,
    "expand-library-ops": _SPLIT,
    "materialize-tile-views": _SPLIT,
    "convert-tensor-to-block-ops": _SPLIT | _BLOCK,
    "fuse-loops": _SPLIT | _BLOCK,
    "expand-power2": _SPLIT | _BLOCK,
    "init-memref": _BLOCK | {"SSAForm", "HasMemRefs"},
    "split-sections": _BLOCK | {"SSAForm", "HasMemRefs"},
    "memory-reuse": _BLOCK | {"SSAForm", "HasMemRefs"},
    "insert-sync": _BLOCK | {"SSAForm", "HasMemRefs"},
    "allocate-memory-addr": _BLOCK | {"SSAForm", "HasMemRefs", "AllocatedMemoryAddr"},
}


def as_strategy(strategy: Any) -> OptimizationStrategy:
    if isinstance(strategy, OptimizationStrategy):
        return strategy
    for s in OptimizationStrategy:
        if str(strategy).lower() in (s.value.lower(), f"optimizationstrategy.{s.value.lower()}"):
            return s
    raise ValueError(f"unknown strategy {strategy!r} (use Default or PTOAS)")


class PassManager:
    def __init__(self, passes: list[Pass], verify_each: bool = True):
        self.passes = list(passes)
        self.verify_each = verify_each

    @staticmethod
    def get_strategy(strategy: Any = OptimizationStrategy.Default) -> PassManager:
        return PassManager([cls() for cls in STRATEGIES[as_strategy(strategy)]])

    def get_pass_names(self) -> list[str]:
        return [p.dump_name for p in self.passes]

    def run_passes(self, program: Program, dump_ir: bool = False, output_dir: str | None = None,
                   prefix: str = "pl") -> Program:
        dump_dir = os.path.join(output_dir, "passes_dump") if (dump_ir and output_dir) else None
        if dump_dir:
            os.makedirs(dump_dir, exist_ok=True)
            _write(os.path.join(dump_dir, "00_frontend.py"), python_print(program, prefix))
        check_orchestration(program)
        verify(program, {"TypeChecked"})
        for i, p in enumerate(self.passes, 1):
            program = p.run(program)
            if self.verify_each:
                verify(program, PRODUCES.get(p.name, {"TypeChecked"}))
            if dump_dir:
                notes = "".join(f"# {p.name}: {line}\n" for line in getattr(p, "log", ()))
                _write(os.path.join(dump_dir, f"{i:02d}_after_{p.dump_name}.py"), notes + python_print(program, prefix))
        return program


def _write(path: str, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)
