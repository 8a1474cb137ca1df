"""Read YAML into plain Python values that remember where they came from.

Mappings become :class:`YMap` (a dict with ``loc`` and per-key ``key_locs``), sequences :class:`YSeq`
(a list with ``loc`` and ``item_locs``); scalars are constructed by PyYAML's safe rules. Anchors
and aliases work, and so does the merge key ``<<: *anchor`` (explicit keys win). Every
:class:`SpecError` raised while checking a document can therefore name the file, line and column.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from ptoisa.errors import Loc, SpecError


class YMap(dict):
    """A YAML mapping: a dict plus the location of the mapping and of each key."""

    loc: Loc
    key_locs: dict[str, Loc]

    def loc_of(self, key: str) -> Loc:
        return self.key_locs.get(key, self.loc)


class YSeq(list):
    """A YAML sequence: a list plus the location of the sequence and of each item."""

    loc: Loc
    item_locs: list[Loc]


def _loc(file: str, node: yaml.Node) -> Loc:
    mark = node.start_mark
    return Loc(file, mark.line + 1, mark.column + 1)


# Aliases are expanded into copies (each copy keeps its own locations): a file whose aliases expand
# to more nodes than this is an alias bomb, not a spec.
MAX_NODES = 200_000


class _Budget:
    __slots__ = ("file", "left")

    def __init__(self, file: str) -> None:
        self.file = file
        self.left = MAX_NODES

    def take(self, node: yaml.Node) -> None:
        self.left -= 1
        if self.left < 0:
            raise SpecError(f"the YAML expands to more than {MAX_NODES} nodes through its aliases "
                            f"(an alias bomb?)", _loc(self.file, node))


def _convert(node: yaml.Node, file: str, ctor: yaml.constructor.SafeConstructor, budget: _Budget) -> Any:
    budget.take(node)
    if isinstance(node, yaml.MappingNode):
        out = YMap()
        out.loc = _loc(file, node)
        out.key_locs = {}
        merged: list[tuple[yaml.Node, yaml.Node]] = []
        explicit: list[tuple[yaml.Node, yaml.Node]] = []
        for knode, vnode in node.value:
            if knode.tag == "tag:yaml.org,2002:merge":
                sources = vnode.value if isinstance(vnode, yaml.SequenceNode) else [vnode]
                for src in sources:
                    if not isinstance(src, yaml.MappingNode):
                        raise SpecError("'<<' merge needs a mapping", _loc(file, src))
                    merged.extend(src.value)
            else:
                explicit.append((knode, vnode))
        for knode, vnode in merged + explicit:
            if knode.tag == _STR and isinstance(knode, yaml.ScalarNode):
                key = knode.value  # a plain string, without the constructor's dispatch
            else:
                key = ctor.construct_object(knode, deep=True)
            if not isinstance(key, (str, int, float, bool)):
                raise SpecError("mapping keys must be plain scalars", _loc(file, knode))
            key = str(key) if not isinstance(key, str) else key
            out[key] = _convert(vnode, file, ctor, budget)
            out.key_locs[key] = _loc(file, knode)
        return out
    if isinstance(node, yaml.SequenceNode):
        seq = YSeq(_convert(item, file, ctor, budget) for item in node.value)
        seq.loc = _loc(file, node)
        seq.item_locs = [_loc(file, item) for item in node.value]
        return seq
    if node.tag == _STR and isinstance(node, yaml.ScalarNode):
        return node.value  # what the safe constructor makes of a plain string, without its dispatch
    return ctor.construct_object(node, deep=True)


_STR = "tag:yaml.org,2002:str"


# PyYAML's libyaml binding, when it was built with it: the same nodes, tags and marks as the pure-Python
# composer, about ten times faster (the instruction and machine specs every process loads: ~0.2 s).
_FAST_LOADER = getattr(yaml, "CSafeLoader", None)


def compose(text: str, fast: bool = True) -> yaml.Node | None:
    """The YAML node tree of ``text`` (``fast=False``: by the pure-Python loader). Composed by
    libyaml when PyYAML has it; a text libyaml rejects is composed again by the pure-Python loader,
    so a bad text is reported in that loader's words, as before."""
    if fast and _FAST_LOADER is not None:
        try:
            return yaml.compose(text, Loader=_FAST_LOADER)
        except yaml.YAMLError:
            pass
    return yaml.compose(text, Loader=yaml.SafeLoader)


def load_yaml(path: Path | str, text: str | None = None) -> Any:
    """Parse one YAML file (or ``text`` attributed to ``path``) into YMap/YSeq/scalars."""
    file = str(path)
    if text is None:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise SpecError(f"cannot read spec file: {exc.strerror}", Loc(file, 0, 0)) from None
        except UnicodeDecodeError as exc:
            raise SpecError(
                f"the file is not UTF-8: byte 0x{exc.object[exc.start]:02x} cannot be decoded", Loc(file, 1, 1)
            ) from None
    try:
        node = compose(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        loc = Loc(file, mark.line + 1, mark.column + 1) if mark is not None else Loc(file, 0, 0)
        raise SpecError(f"invalid YAML: {exc.problem or exc.context}", loc) from None
    except yaml.reader.ReaderError as exc:  # a control character: a position, no mark
        before = text[: exc.position]
        loc = Loc(file, before.count("\n") + 1, exc.position - before.rfind("\n"))
        code = exc.character if isinstance(exc.character, int) else ord(exc.character)
        raise SpecError(f"invalid YAML: character U+{code:04X} is not allowed", loc) from None
    if node is None:
        raise SpecError("empty spec file", Loc(file, 1, 1))
    ctor = yaml.SafeLoader("")
    try:
        return _convert(node, file, ctor, _Budget(file))
    except RecursionError:
        raise SpecError("the YAML is nested too deeply", Loc(file, 1, 1)) from None


def expect_map(value: Any, what: str, loc: Loc) -> YMap:
    if not isinstance(value, YMap):
        raise SpecError(f"{what} must be a mapping", getattr(value, "loc", loc))
    return value


def check_keys(m: YMap, what: str, required: frozenset[str] | set[str], optional: frozenset[str] | set[str]) -> None:
    """Raise SpecError for a missing required key or an unknown key of mapping ``m``."""
    for key in m:
        if key not in required and key not in optional:
            allowed = ", ".join(sorted(set(required) | set(optional)))
            raise SpecError(f"{what}: unknown key '{key}' (allowed: {allowed})", m.loc_of(key))
    for key in sorted(required):
        if key not in m:
            raise SpecError(f"{what}: missing field '{key}'", m.loc)


def number(value: Any, what: str, loc: Loc) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise SpecError(f"{what} must be a number, got {value!r}", loc)
    return value
