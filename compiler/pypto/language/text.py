"""The text parser entry points (spec §5.9): ``pl.parse``, ``pl.loads`` and the program-only aliases.

Printed IR (``ir.python_print``) is DSL source, so parsing it back means running it as a module: the
decorators then read the source back through ``inspect``, which finds it because the text is
registered in ``linecache`` under the given filename. ``exec`` runs the text: only trusted text may
be parsed.
"""

from __future__ import annotations

import linecache
import sys
import types
from typing import Any

from pypto.ir.stmt import Function, Program


def parse(code: str, filename: str = "<string>") -> Function | Program:
    """The single ``ir.Function`` or ``ir.Program`` that ``code`` defines."""
    pl = sys.modules[__package__]  # pypto.language, complete once a user can call this
    lines = code.splitlines(keepends=True)
    linecache.cache[filename] = (len(code), None, lines, filename)
    module = types.ModuleType("_pypto_parsed")
    module.__dict__["pl"] = pl
    module.__file__ = filename
    exec(compile(code, filename, "exec"), module.__dict__)  # noqa: S102  (spec §5.9: trusted text only)
    found = [v for v in module.__dict__.values() if isinstance(v, (Function, Program))]
    if len(found) != 1:
        raise ValueError(f"{filename}: expected exactly one pl.function or pl.program, found {len(found)}")
    return found[0]


def loads(path: str) -> Function | Program:
    """:func:`parse` of the text of the file at ``path`` (spans name that file)."""
    with open(path) as f:
        return parse(f.read(), path)


def _program(result: Any, where: str) -> Program:
    if not isinstance(result, Program):
        raise ValueError(f"{where}: the text defines a function, not a pl.program")  # noqa: TRY004  (spec §5.9)
    return result


def parse_program(code: str, filename: str = "<string>") -> Program:
    """Deprecated alias of :func:`parse` that insists on a program."""
    return _program(parse(code, filename), filename)


def loads_program(path: str) -> Program:
    """Deprecated alias of :func:`loads` that insists on a program."""
    return _program(loads(path), path)
