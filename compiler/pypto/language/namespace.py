"""Python-level stand-ins for DSL names.

The parser reads the AST and never runs a DSL body; these objects only exist so that ``pl.add`` and
friends resolve (for editors, ``hasattr`` and the parser's name checks) and so that running a DSL
function by mistake gives a clear message instead of silently doing something else.
"""

from __future__ import annotations

from typing import Any

from pypto.errors import PyptoError


class OpStub:
    """A DSL op name; calling it outside a ``@pl.function`` body is an error."""

    def __init__(self, namespace: str, name: str):
        self.namespace = namespace
        self.name = name
        self.__name__ = name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise PyptoError(
            f"pl.{self.namespace + '.' if self.namespace else ''}{self.name} can only be used inside a "
            "@pl.function body (the body is compiled, not executed)"
        )

    def __repr__(self) -> str:
        return f"<pl op {self.namespace or 'pl'}.{self.name}>"


class Namespace:
    """``pl.block`` / ``pl.tensor`` / ``pl.system``: attribute access gives op stubs."""

    def __init__(self, name: str, names: tuple[str, ...]):
        self._name = name
        self._names = frozenset(names)

    def __getattr__(self, item: str) -> OpStub:
        if item.startswith("_") or item not in self._names:
            raise AttributeError(f"pl.{self._name} has no op '{item}'")
        return OpStub(self._name, item)

    def __dir__(self) -> list[str]:
        return sorted(self._names)

    def __repr__(self) -> str:
        return f"<pl namespace {self._name}>"
