"""Op definitions by category, and the full op table: importing this package registers every op."""

from pypto.ir.registry import OpDef, all_ops, create_op_call, get_op, is_op_registered
from pypto.ops import block, fifo, system, tensor, tile_data

__all__ = ["OpDef", "all_ops", "block", "create_op_call", "fifo", "get_op", "is_op_registered", "system", "tensor", "tile_data"]
