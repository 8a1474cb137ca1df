"""What the DSL parser knows of the Python side: a function's source and spans, the Python names
visible to it, and the ``@pl.inline`` helper record (shared by the parser, the call dispatch and the
decorators, below all three)."""

from __future__ import annotations

import ast
import builtins
import inspect
import textwrap
import types
from typing import Any

from pypto.errors import ParseError, Span


class SourceInfo:
    def __init__(self, pyfunc: Any):
        try:
            lines, first = inspect.getsourcelines(pyfunc)
        except (OSError, TypeError):
            raise ParseError(
                f"cannot read the source of '{pyfunc.__name__}' (DSL functions must live in a .py file)"
            ) from None
        raw = "".join(lines)
        dedented = textwrap.dedent(raw)
        self.indent = len(lines[0]) - len(lines[0].lstrip()) if lines else 0
        self.first_line = first
        self.filename = inspect.getsourcefile(pyfunc) or "<unknown>"
        module = ast.parse(dedented)
        node = module.body[0]
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            raise ParseError("@pl.function must decorate a function definition")
        self.node = node

    def span(self, node: ast.AST) -> Span:
        line = getattr(node, "lineno", 1) + self.first_line - 1
        col = getattr(node, "col_offset", 0) + self.indent + 1
        end_line = (getattr(node, "end_lineno", None) or getattr(node, "lineno", 1)) + self.first_line - 1
        end_col = (getattr(node, "end_col_offset", None) or 0) + self.indent + 1
        return Span(self.filename, line, col, end_line, end_col)


class Namespace:
    """Python names visible to the DSL: closure cells, captured frame locals, globals, builtins."""

    def __init__(self, pyfunc: Any, frames: list[dict]):
        self.layers: list[dict] = []
        if pyfunc.__closure__:
            cells = {}
            for name, cell in zip(pyfunc.__code__.co_freevars, pyfunc.__closure__, strict=False):
                try:
                    cells[name] = cell.cell_contents
                except ValueError:
                    continue
            self.layers.append(cells)
        self.layers.extend(frames)
        self.layers.append(pyfunc.__globals__)
        self.layers.append(vars(builtins))

    def lookup(self, name: str) -> tuple[bool, Any]:
        for layer in self.layers:
            if name in layer:
                return True, layer[name]
        return False, None

    def as_dict(self) -> dict:
        merged: dict = {}
        for layer in reversed(self.layers):
            merged.update(layer)
        return merged


def is_pl_module(obj: Any) -> bool:
    """Whether ``obj`` is the ``pypto.language`` module (however the user imported it)."""
    return isinstance(obj, types.ModuleType) and obj.__name__ == "pypto.language"


class InlineFunction:
    """A ``@pl.inline`` helper: its body is re-parsed at every call site."""

    def __init__(self, pyfunc: Any, frames: list[dict]):
        self.pyfunc = pyfunc
        self.frames = frames
