"""PyPTO-Lib: tensor-level primitives and composites, lowered by tiling (seed 003)."""
