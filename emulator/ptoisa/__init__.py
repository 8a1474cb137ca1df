"""ptoisa: the `.pto` contract shared by the emulator (`pyptoemu`) and the compiler (`pypto`).

It owns the text format (:mod:`ptoisa.text`: lexer, parser, AST, the one printer), the instruction
records read from ``isa_specs/instructions`` (:mod:`ptoisa.isa`), the machine records read from
``isa_specs/machines`` (:mod:`ptoisa.machine`), dtypes and the base error types. It imports neither
``pyptoemu`` nor ``pypto``: every arrow points into it.
"""
