"""PyPTO-Lib (seed 003): the tensor-level primitive library, bound to ``pl``.

``pl.<name>(x, ...)`` on Tensors builds one tensor op (:mod:`pypto.lib.ops`) in any function; in an
InCore kernel (a ``@pl.function(type=InCore)``, an outlined ``with pl.incore():`` scope) the
ExpandLibraryOps pass replaces it by the op's definition, PyPTO IR over the block ops:

* element-wise (:mod:`pypto.lib.elementwise`): add, sub, mul, div, maximum, minimum with NumPy
  broadcasting and scalar operands, pow by an integer, exp, log, sqrt, rsqrt, reciprocal, neg, abs,
  relu, sigmoid, tanh, gelu, silu, cast;
* matmul and batched matmul for any M, N, K (:mod:`pypto.lib.matmul`, through ConvertTensorToBlockOps);
* reductions (:mod:`pypto.lib.reduction`): sum, max, min, mean over any axis or axes of any rank,
  ``keepdim`` (and the older row_sum/row_max);
* composites (:mod:`pypto.lib.composite`), built from the primitives' tile functions as one tile
  loop each: softmax, log_softmax, layer_norm, rms_norm, swiglu;
* layout (:mod:`pypto.lib.layout`): broadcast_to, slice and concat of any rank, transpose of any two
  axes and permute (any permutation) of any rank, and any reshape that keeps the element order.

A ``pl.dynamic`` dim (rows, leading dims, the last axis) is tiled with run-time trip counts and valid
rows / columns for the element-wise ops, reductions over any axes and composites; matmul and the layout
ops stay static (:mod:`pypto.lib.emit`).
Tiling for any shape, tails and the two-level loops are :mod:`pypto.lib.tiling`; the view casts
``cast_tensor_to_tile`` / ``cast_tile_to_tensor`` are :mod:`pypto.lib.ops`.
"""

from pypto.lib import composite, elementwise, layout, reduction  # noqa: F401 - register the definitions
from pypto.lib.ops import BUILDERS, cast_tensor_to_tile, cast_tile_to_tensor
from pypto.lib.registry import DEFINITIONS, defined

__all__ = ["BUILDERS", "DEFINITIONS", "cast_tensor_to_tile", "cast_tile_to_tensor", "defined"]
