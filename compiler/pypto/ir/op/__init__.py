"""``pypto.ir.op.block`` / ``.tensor`` / ``.system``: the IR builder functions of each op category."""

from pypto.ops import block, system, tensor

__all__ = ["block", "system", "tensor"]
