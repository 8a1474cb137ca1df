"""The tile-level SSA form of seed 002 above the level-2 `.pto` form: its op vocabulary
(:mod:`ptoisa.tile.ops`), verifier (:mod:`ptoisa.tile.verify`), passes (:mod:`ptoisa.tile.passes`)
and lowering to level-2 AST (:mod:`ptoisa.tile.lower`). Part of the contract: the emulator runs it,
the compiler emits it, neither imports the other."""
