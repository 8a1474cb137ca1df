"""IR -> IR transforms, one per module, and the pass manager with named strategies."""

from pypto.passes.allocate_memory_addr import AllocateMemoryAddrPass
from pypto.passes.convert_to_ssa import ConvertToSSAPass
from pypto.passes.init_memref import InitMemRefPass
from pypto.passes.insert_sync import InsertSyncPass
from pypto.passes.manager import OptimizationStrategy, PassManager
from pypto.passes.memory_reuse import MemoryReusePass


def convert_to_ssa() -> ConvertToSSAPass:
    return ConvertToSSAPass()


def init_mem_ref() -> InitMemRefPass:
    return InitMemRefPass()


def basic_memory_reuse() -> MemoryReusePass:
    return MemoryReusePass()


def insert_sync() -> InsertSyncPass:
    return InsertSyncPass()


def allocate_memory_addr() -> AllocateMemoryAddrPass:
    return AllocateMemoryAddrPass()


__all__ = [
    "AllocateMemoryAddrPass", "ConvertToSSAPass", "InitMemRefPass", "InsertSyncPass", "MemoryReusePass",
    "OptimizationStrategy", "PassManager", "allocate_memory_addr", "basic_memory_reuse", "convert_to_ssa",
    "init_mem_ref", "insert_sync",
]
