"""SSA name scopes of a ``.pto`` function (MLIR rules), for checks made before anything runs.

A name is visible from its definition to the end of its region and in the regions nested in it;
sibling regions may reuse a name (the then- and else-branch of one scf.if each defining ``%v``,
with different types). :class:`NameScope` walks a function in program order and, at each op, holds
exactly the names the op can see with their types, integer constants and defining ops.
"""

from __future__ import annotations

from collections import ChainMap
from collections.abc import Callable, Iterator, Mapping

from ptoisa.errors import Loc, PtoError, VerifyError
from ptoisa.text import ast as A


def walk(region: A.Region) -> Iterator[A.Op]:
    """Every op of ``region`` and of the regions nested in it, in program order."""
    for op in region.ops:
        yield op
        for r in op.regions:
            yield from walk(r)


def _uses(op: A.Op) -> list[str]:
    """The SSA names ``op`` reads (operands, ins, outs, keyed groups; not its regions' ops)."""
    out = [x for x in (*op.operands, *op.ins, *op.outs) if isinstance(x, str)]
    for group in op.groups.values():
        out.extend(x for x in group if isinstance(x, str))
    return out


class NameScope:
    """The SSA names visible at each op of one function, with their types and integer constants.

    Names are scoped to their region (MLIR): a name defined in a region is visible from its
    definition to the end of that region and in the regions nested in it; not in a sibling region
    (the then- and else-branch of one scf.if may each define ``%v``, with different types), not
    before its definition and not after its region ends (a region hands values out only through
    scf.yield and its op's results). A name is defined once among the names visible where it is
    defined: no shadowing (MLIR forbids it, and an executor that keeps one frame of values per call,
    as pyptoemu's scalar unit does, would let a nested redefinition overwrite the outer value).
    Breaking either rule is a located error.
    """

    def __init__(self, fn: A.Function, fold: Callable[[A.Op, Mapping], int | None] | None = None,
                 implied_type: Callable[[A.Op, int], A.Type | None] | None = None):
        """``fold(op, constants)``: the integer value of an op whose operands are constants (the
        emulator's arith folder), so :attr:`constants` also holds values computed from constants.
        ``implied_type(op, k)``: the type of result ``k`` of an op whose text writes none, as its
        spec gives it (``%b = pto.get_block_idx`` is an i64); None leaves it untyped."""
        self.fn = fn
        self.fold = fold
        self.implied_type = implied_type
        self.types: ChainMap = ChainMap(dict(zip(fn.args, fn.arg_types, strict=False)))
        self.constants: ChainMap = ChainMap({})
        self.defined_at: ChainMap = ChainMap({a: fn.loc for a in fn.args})
        self.defs: ChainMap = ChainMap({})  # name -> the op whose result it is (not for arguments)
        self.errors: list[PtoError] = []  # names defined twice
        self.use_errors: list[PtoError] = []  # the current op's uses of names it cannot see
        self._every_def: dict[str, list[Loc]] = {}  # every definition in the function, for messages
        for op in walk(fn.body):
            for name in op.results:
                self._every_def.setdefault(name, []).append(op.loc)
            for region in op.regions:
                for name in region.args:
                    self._every_def.setdefault(name, []).append(op.loc)

    def walk(self) -> Iterator[tuple[A.Op, A.Op | None]]:
        """Every op in program order with the op whose region holds it; while the caller looks at
        an op, :attr:`types` / :attr:`constants` hold exactly the names it can see and
        :attr:`use_errors` the errors of its uses (the caller clears them)."""
        yield from self._walk_region(self.fn.body, None)

    def _walk_region(self, region: A.Region, parent: A.Op | None) -> Iterator[tuple[A.Op, A.Op | None]]:
        for op in region.ops:
            for name in dict.fromkeys(_uses(op)):
                if name not in self.types:
                    self.use_errors.append(VerifyError(self._not_visible(name, op.loc), op.loc))
            yield op, parent
            for k, inner in enumerate(op.regions):
                for m in (self.types, self.constants, self.defined_at, self.defs):
                    m.maps.insert(0, {})
                arg_types = _region_arg_types(op, k, inner)
                for j, name in enumerate(inner.args):
                    self._define(name, arg_types[j] if j < len(arg_types) else None, op.loc)
                yield from self._walk_region(inner, op)
                for m in (self.types, self.constants, self.defined_at, self.defs):
                    del m.maps[0]
            for k, name in enumerate(op.results):  # a result may have no written type (get_block_idx)
                self._define(name, self._result_type(op, k), op.loc)
                self.defs[name] = op
            if op.name == "arith.constant" and op.results:
                v = op.attrs.get("value")
                if isinstance(v, int) and not isinstance(v, bool):
                    self.constants[op.results[0]] = v
            elif self.fold is not None and len(op.results) == 1:
                v = self.fold(op, self.constants)
                if v is not None:
                    self.constants[op.results[0]] = v

    def _result_type(self, op: A.Op, k: int) -> A.Type | None:
        if k < len(op.result_types):
            return op.result_types[k]
        return self.implied_type(op, k) if self.implied_type is not None else None

    def _define(self, name: str, t, loc: Loc) -> None:
        first = self.defined_at.get(name)
        if first is not None:
            where = "an argument of the function" if first is self.fn.loc else f"defined at {first.line}:{first.col}"
            self.errors.append(VerifyError(
                f"{name} is defined again ({where}); a name is defined once where it is visible, nested regions "
                f"included (sibling regions may each define it)", loc))
        self.types[name] = t
        self.defined_at[name] = loc
        self.constants.pop(name, None)
        self.defs.pop(name, None)

    def _not_visible(self, name: str, use: Loc) -> str:
        defs = self._every_def.get(name, [])
        if not defs:
            return f"undefined SSA value {name}"
        first = defs[0]
        if all((d.line, d.col) > (use.line, use.col) for d in defs):
            return f"{name} is used before its definition at {first.line}:{first.col}"
        return (f"{name} is not visible here: it is defined at {first.line}:{first.col} inside a region (a loop "
                f"body or a branch) that this use is not in; pass it out with scf.yield and the op's results")


def _region_arg_types(op: A.Op, k: int, region: A.Region) -> list:
    """The types of region ``k``'s arguments: an scf.for's induction variable has the loop's type
    (``index``, or the integer type written after it: ``scf.for ... : i32``, pto-text-format §3.2)
    and its carried values have the loop's result types; an scf.while's before-region takes the
    inputs' types, its after-region the results'; any other region's arguments have their written
    types."""
    if op.name == "scf.for" and k == 0 and region.args:
        return [region.arg_types[0] if region.arg_types else A.ScalarType("index"), *op.result_types]
    if op.name == "scf.while":
        if k == 0:
            return list(op.operand_types or op.result_types)
        return list(region.arg_types or op.result_types)
    return list(region.arg_types)
