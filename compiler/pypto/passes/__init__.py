"""IR -> IR transforms, one per module, and the pass manager with named strategies."""

from pypto.passes.allocate_memory_addr import AllocateMemoryAddrPass
from pypto.passes.chunk_loops import InterchangeChunkLoopsPass, SplitChunkedLoopsPass
from pypto.passes.convert_tensor_to_block_ops import ConvertTensorToBlockOpsPass
from pypto.passes.convert_to_ssa import ConvertToSSAPass
from pypto.passes.expand_library_ops import ExpandLibraryOpsPass
from pypto.passes.expand_power2 import ExpandPower2Pass
from pypto.passes.fuse_loops import FuseLoopsPass
from pypto.passes.init_memref import InitMemRefPass
from pypto.passes.insert_sync import InsertSyncPass
from pypto.passes.manager import OptimizationStrategy, PassManager
from pypto.passes.materialize_tile_views import MaterializeTileViewsPass
from pypto.passes.memory_reuse import MemoryReusePass
from pypto.passes.outline_incore_scopes import OutlineIncoreScopesPass
from pypto.passes.split_cube_vector import SplitCubeVectorPass
from pypto.passes.unroll_loops import UnrollLoopsPass


def convert_to_ssa() -> ConvertToSSAPass:
    return ConvertToSSAPass()


def unroll_loops() -> UnrollLoopsPass:
    return UnrollLoopsPass()


def split_chunked_loops() -> SplitChunkedLoopsPass:
    """The SplitChunkedLoops pass (spec §6.3)."""
    return SplitChunkedLoopsPass()


def interchange_chunk_loops() -> InterchangeChunkLoopsPass:
    """The InterchangeChunkLoops pass (spec §6.3)."""
    return InterchangeChunkLoopsPass()


def outline_incore_scopes() -> OutlineIncoreScopesPass:
    return OutlineIncoreScopesPass()


def split_cube_vector() -> SplitCubeVectorPass:
    """The SplitCubeVector pass: kernels mixing a tensor-level matmul with vector ops become cube and
    vector kernels."""
    return SplitCubeVectorPass()


def convert_tensor_to_block_ops() -> ConvertTensorToBlockOpsPass:
    return ConvertTensorToBlockOpsPass()


def fuse_loops() -> FuseLoopsPass:
    """The FuseLoops pass (seed 003 §3.6): producer/consumer tile loops fused, across launches too."""
    return FuseLoopsPass()


def expand_power2() -> ExpandPower2Pass:
    """The ExpandPower2 pass (seed 003 §6.4): pl.parallel_for_power2 loops into power-of-two chunks."""
    return ExpandPower2Pass()


def init_mem_ref() -> InitMemRefPass:
    return InitMemRefPass()


def basic_memory_reuse() -> MemoryReusePass:
    return MemoryReusePass()


def insert_sync() -> InsertSyncPass:
    return InsertSyncPass()


def allocate_memory_addr() -> AllocateMemoryAddrPass:
    return AllocateMemoryAddrPass()


__all__ = [
    "AllocateMemoryAddrPass",
    "ConvertTensorToBlockOpsPass",
    "ConvertToSSAPass",
    "ExpandLibraryOpsPass",
    "ExpandPower2Pass",
    "FuseLoopsPass",
    "InitMemRefPass",
    "InsertSyncPass",
    "InterchangeChunkLoopsPass",
    "MaterializeTileViewsPass",
    "MemoryReusePass",
    "OptimizationStrategy",
    "OutlineIncoreScopesPass",
    "PassManager",
    "SplitChunkedLoopsPass",
    "SplitCubeVectorPass",
    "UnrollLoopsPass",
    "allocate_memory_addr",
    "basic_memory_reuse",
    "convert_tensor_to_block_ops",
    "convert_to_ssa",
    "expand_power2",
    "fuse_loops",
    "init_mem_ref",
    "insert_sync",
    "interchange_chunk_loops",
    "outline_incore_scopes",
    "split_chunked_loops",
    "split_cube_vector",
    "unroll_loops",
]
