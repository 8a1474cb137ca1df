"""Pass protocol: a frozen dataclass with a kebab-case ``name`` and ``run(program) -> program``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from pypto.enums import FunctionType
from pypto.ir.stmt import Function, Program


@dataclass(frozen=True)
class Pass:
    name: ClassVar[str] = "pass"
    dump_name: ClassVar[str] = "Pass"

    def run(self, program: Program) -> Program:
        return program.with_functions(self.run_function(f) for f in program.functions_list)

    def run_function(self, func: Function) -> Function:
        return func

    def __call__(self, program: Program) -> Program:
        return self.run(program)


def is_kernel(func: Function) -> bool:
    """Functions that run on an AI core (everything but Orchestration)."""
    return func.type is not FunctionType.Orchestration


class NameAllocator:
    """Unique names within one function: the first use keeps the name, later ones get _1, _2, ..."""

    def __init__(self, taken: set[str] | None = None):
        self.taken = set(taken or ())

    def fresh(self, base: str) -> str:
        if base not in self.taken:
            self.taken.add(base)
            return base
        i = 1
        while f"{base}_{i}" in self.taken:
            i += 1
        self.taken.add(f"{base}_{i}")
        return f"{base}_{i}"
