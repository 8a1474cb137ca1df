"""Whole-module verification before anything runs.

Every op of every function and of every branch is bound once, through the same
:func:`pyptoemu.core.binding.bind_op` the scalar unit runs (so what is checked is what runs). On top of binding, what can be decided from the text alone is checked
here: tile ops on the operand types the text declares (kinds, locations, dtypes, shapes, legal
moves for the machine: the same checks the issue step makes, on static shapes), the entry rules (a
kernel entry returns nothing, no function calls itself, calls match their callee) and static tile
capacity. Every error is collected and reported at once, each with its ``file:line:col`` (exit 2).
Checks that depend on run-time values (valid shapes, addresses, scalar arguments) stay with the
steps.
"""

from __future__ import annotations

from collections.abc import Iterator

from ptoisa.dtypes import is_known
from ptoisa.machine import Machine
from ptoisa.text import ast as A
from pyptoemu.core.aicore import AICore
from pyptoemu.core.scalar import FailedStep, ScalarUnit
from pyptoemu.core.tileop import TileOpBinding
from pyptoemu.errors import InputError, Loc, PtoError, VerifyError

# `pto.target_arch` spellings -> the machine file that models them (isa_specs/machines/)
ARCH_MACHINES = {"a2": "a2a3", "a3": "a2a3", "a2a3": "a2a3", "a5": "a5"}


class ModuleVerifyError(VerifyError):
    """Every error the verifier found, one ``file:line:col: message`` line each (exit code 2)."""

    def __init__(self, errors: list[PtoError]):
        super().__init__(errors[0].message, errors[0].loc)
        self.errors = errors

    def __str__(self) -> str:
        return "\n".join(str(e) for e in self.errors)


def target_machine(module: A.Module, requested: str | None) -> str:
    """The machine to run on: the one the user asked for, else the module's ``pto.target_arch``,
    else a2a3. A module that names another arch than the one the user forces is a located error."""
    arch = module.attrs.get("pto.target_arch")
    loc = module.loc or Loc(module.file, 1, 1)
    wanted = None
    if arch is not None:
        wanted = ARCH_MACHINES.get(str(arch))
        if wanted is None:
            raise VerifyError(f"pto.target_arch = \"{arch}\" is not a machine the emulator models "
                              f"(known: {', '.join(sorted(ARCH_MACHINES))})", loc)
    if requested is None:
        return wanted or "a2a3"
    if wanted is not None and _machine_name(requested) != wanted:
        raise VerifyError(f"the module is compiled for pto.target_arch = \"{arch}\" (machine {wanted}) "
                          f"but --machine {requested} was asked for; drop --machine or change the "
                          f"module's target_arch", loc)
    return requested


def _machine_name(requested: str) -> str:
    """``a2a3:ascend910b2`` -> ``a2a3``; a machine file path keeps its stem."""
    name = requested.split(":", 1)[0]
    return name.rsplit("/", 1)[-1].removesuffix(".yaml")


def verify_module(module: A.Module, entry: A.Function, isa, machine: Machine) -> None:
    """Bind and check every op of ``module`` on a core that has every pipe and buffer of the machine
    (what a core of one kind lacks is said when that core runs the op); raise
    :class:`ModuleVerifyError` listing every error found."""
    su = AICore(module, isa, machine, check_uninitialised=False, label="verifier").scalar
    errors: list[PtoError] = []
    errors.extend(_entry_errors(module, entry))
    for fn in module.functions:
        errors.extend(_dtype_errors(fn.arg_types + fn.result_types, fn.loc, f"@{fn.name}"))
        types = _type_env(fn)
        constants = _constants(fn)
        for op in _walk(fn.body):
            bad_types = _dtype_errors(_op_types(op), op.loc, op.name)
            errors.extend(bad_types)
            if bad_types:
                continue  # binding would only trip over the same unknown type
            errors.extend(_tile_type_errors(_op_types(op), op))
            errors.extend(_op_form_errors(op, types, constants))
            errors.extend(_scalar_operand_errors(op, types))
            errors.extend(_arith_type_errors(op, types))
            errors.extend(_yield_errors(op, types))
            errors.extend(_call_errors(op, types, module))
            errors.extend(_bind_and_check(su, op, types))
    if errors:
        errors.sort(key=lambda e: (e.loc is None, (e.loc.line, e.loc.col) if e.loc else (0, 0)))
        raise ModuleVerifyError(errors)


def _walk(region: A.Region) -> Iterator[A.Op]:
    for op in region.ops:
        yield op
        for r in op.regions:
            yield from _walk(r)


def _bind_and_check(su: ScalarUnit, op: A.Op, types: dict) -> list[PtoError]:
    try:
        step = su.bind(su, op)
    except InputError as e:
        return [_located(e, op)]
    su.steps[op] = step
    if isinstance(step, FailedStep):
        return [_located(step.error, op)] if isinstance(step.error, InputError) else []
    binding = getattr(step, "__self__", None)
    if isinstance(binding, TileOpBinding):
        try:
            binding.check_static(lambda name: types.get(name))
        except InputError as e:
            return [_located(e, op)]
    return []


def _op_types(op: A.Op) -> list:
    types = [*op.result_types, *op.operand_types, *op.in_types, *op.out_types]
    for ts in op.group_types.values():
        types.extend(ts)
    return types


def _dtype_errors(types: list, loc: Loc, what: str) -> list[PtoError]:
    """An element or scalar type the format does not know (``f8``) is an error where it is written."""
    for t in types:
        if isinstance(t, A.ScalarType):
            name = t.name
        elif isinstance(t, A.TileBufType):
            name = t.dtype
        else:
            name = getattr(t, "elem", None)
        if isinstance(name, str) and name != "index" and not is_known(name):
            return [VerifyError(f"{what}: unknown element type '{name}' in {t}", loc)]
    return []


_FRACTALS = (16, 32, 512, 1024)  # pto-text-format §2.5, §5.3: the fractal sizes the assembler accepts
_PADS = range(4)  # §2.5: 0 null, 1 zero, 2 max, 3 min
_COMPACTS = range(3)  # §2.5: 0 null, 1 normal, 2 row_plus_one
_CMP_MODES = ("eq", "ne", "lt", "le", "gt", "ge")  # §2.9 CmpMode (lower case; `less_than` is not accepted)


def _tile_type_errors(types: list, op: A.Op) -> list[PtoError]:
    """A tile type whose enum fields are out of range (§5.3: the assembler checks fractal and the
    enum ranges): said where the type is written."""
    for t in types:
        if not isinstance(t, A.TileBufType):
            continue
        if t.fractal not in _FRACTALS:
            return [VerifyError(f"{op.name}: fractal={t.fractal} in {t}; fractal is one of "
                                f"{', '.join(map(str, _FRACTALS))}", op.loc)]
        if t.pad not in _PADS or t.compact not in _COMPACTS:
            return [VerifyError(f"{op.name}: pad={t.pad}, compact={t.compact} in {t}; pad is 0..3 (null, zero, max, "
                                f"min), compact 0..2", op.loc)]
    return []


def _op_form_errors(op: A.Op, types: dict, constants: dict) -> list[PtoError]:
    """Rules §4.1 states for views and aliases, decided from the types the text gives."""
    name, loc = op.name, op.loc
    src = types.get(op.operands[0]) if op.operands and isinstance(op.operands[0], str) else None
    res = op.result_types[0] if op.result_types else None
    mode = op.attrs.get("cmpMode")
    if mode is not None and str(getattr(mode, "value", mode)).lower() not in _CMP_MODES:
        return [VerifyError(f"{name}: unknown compare mode '{getattr(mode, 'value', mode)}' "
                            f"(one of {', '.join(_CMP_MODES)})", loc)]
    if name == "pto.make_tensor_view" and isinstance(src, A.PtrType) and isinstance(res, A.TensorViewType) \
            and src.elem != res.elem:
        return [VerifyError(f"{name}: the pointer's elements are {src.elem} but the view's {res.elem} "
                            f"(they must agree)", loc)]
    if name in ("pto.treshape", "pto.bitcast") and isinstance(src, A.TileBufType) and isinstance(res, A.TileBufType):
        return _alias_errors(name, src, res, loc)
    if name == "pto.set_validshape" and isinstance(src, A.TileBufType):
        vr, vc = (constants.get(x) for x in op.operands[1:3])
        if (vr is not None and not 0 <= vr <= src.rows) or (vc is not None and not 0 <= vc <= src.cols):
            return [VerifyError(f"{name}: valid shape {vr}x{vc} outside the tile's {src.rows}x{src.cols}", loc)]
    return []


def _alias_errors(name: str, src: A.TileBufType, res: A.TileBufType, loc: Loc) -> list[PtoError]:
    """treshape keeps the location and boxed-ness; bitcast keeps everything but the dtype (§4.1)."""
    if src.loc != res.loc:
        return [VerifyError(f"{name}: the source is in {src.loc} but the result in {res.loc} (same loc)", loc)]
    if (src.slayout == "none_box") != (res.slayout == "none_box"):
        return [VerifyError(f"{name}: {src.slayout} -> {res.slayout}: boxed <-> non-boxed is forbidden", loc)]
    if name == "pto.bitcast" and (src.rows, src.cols, src.v_row, src.v_col, src.blayout, src.slayout, src.fractal) \
            != (res.rows, res.cols, res.v_row, res.v_col, res.blayout, res.slayout, res.fractal):
        return [VerifyError(f"{name}: {src} -> {res}: shape, valid shape and config must be equal (only the dtype "
                            f"changes)", loc)]
    return []


def _constants(fn: A.Function) -> dict[str, int]:
    """SSA name -> value of the integer ``arith.constant`` ops of ``fn``."""
    out: dict[str, int] = {}
    for op in _walk(fn.body):
        if op.name == "arith.constant" and op.results:
            v = op.attrs.get("value")
            if isinstance(v, int) and not isinstance(v, bool):
                out[op.results[0]] = v
    return out


# Operands the core reads as numbers (indices, addresses, bounds, conditions), by op: positions in
# ``op.operands`` (None: all of them) and operand groups. A tile, view or pointer there is an error.
_SCALAR_POSITIONS: dict[str, tuple[tuple[int, ...] | None, tuple[str, ...]]] = {
    "scf.for": ((0, 1, 2), ()),
    "scf.if": ((0,), ()),
    "scf.condition": ((0,), ()),
    "pto.alloc_tile": ((), ("addr", "valid_row", "valid_col")),
    "pto.make_tensor_view": ((), ("shape", "strides")),
    "pto.partition_view": ((), ("offsets", "sizes")),
    "pto.subview": ((), ("offsets", "sizes")),
    "pto.set_validshape": ((1, 2), ()),
    "pto.subset": ((1, 2), ("sizes",)),
    "pto.addptr": ((1,), ()),
    "pto.get_tensor_view_dim": ((1,), ()),
    "pto.set_flag_dyn": ((0,), ()),
    "pto.wait_flag_dyn": ((0,), ()),
}
_NOT_SCALAR = (A.TileBufType, A.PtrType, A.TensorViewType, A.PartitionViewType, A.MemRefType)


def _scalar_operand_errors(op: A.Op, types: dict) -> list[PtoError]:
    """A tile, view or pointer where the op reads a number (an address, a bound, a condition)."""
    positions, groups = _SCALAR_POSITIONS.get(op.name, ((), ()))
    if op.name.startswith("arith."):
        positions = None
    named = [(f"operand {i}", x) for i, x in enumerate(op.operands) if positions is None or i in positions]
    named += [(f"'{g}'", x) for g in groups for x in op.groups.get(g, [])]
    for what, x in named:
        t = types.get(x) if isinstance(x, str) else None
        if isinstance(t, _NOT_SCALAR):
            return [VerifyError(f"{op.name}: {what} ({x}) must be a number (index or integer), but it is "
                                f"a {t}", op.loc)]
    return []


def _arith_type_errors(op: A.Op, types: dict) -> list[PtoError]:
    """An arith op's operands have the type it is written with (MLIR: ``arith.addi %a, %b : i32``
    takes two i32; a cast's operand has its source type; select's condition is i1). A value of
    another width is not silently converted."""
    if not op.name.startswith("arith.") or not op.operand_types:
        return []
    operands = list(op.operands)
    wanted = list(op.operand_types)
    if op.name == "arith.select" and operands:
        cond, *operands = operands
        if isinstance(types.get(cond), A.ScalarType) and types[cond].name != "i1":
            return [VerifyError(f"arith.select: the condition {cond} is {types[cond]}, not i1", op.loc)]
    if len(wanted) == 1:
        wanted = wanted * len(operands)
    for x, want in zip(operands, wanted, strict=False):
        have = types.get(x) if isinstance(x, str) else None
        if isinstance(have, A.ScalarType) and isinstance(want, A.ScalarType) and have.name != want.name:
            return [VerifyError(f"{op.name}: operand {x} is {have.name} but the op is written for {want.name} "
                                f"(convert it first, e.g. arith.index_cast)", op.loc)]
    return []


def _yield_errors(op: A.Op, types: dict) -> list[PtoError]:
    """What an scf.for or scf.if yields is of the kind of its results (a number where a number is
    carried, a tile where a tile is)."""
    if op.name not in ("scf.for", "scf.if") or not op.result_types:
        return []
    errors: list[PtoError] = []
    for region in op.regions:
        end = region.ops[-1] if region.ops else None
        if end is None or end.name != "scf.yield":
            continue
        for k, (x, want) in enumerate(zip(end.operands, op.result_types, strict=False)):
            have = types.get(x) if isinstance(x, str) else None
            if have is not None and isinstance(have, _NOT_SCALAR) != isinstance(want, _NOT_SCALAR):
                errors.append(VerifyError(f"scf.yield: value {k} ({x}) is a {have} but {op.name} carries a "
                                          f"{want} there", end.loc))
    return errors


def _call_errors(op: A.Op, types: dict, module: A.Module) -> list[PtoError]:
    """A call passes a number where its callee takes a number, a pointer, tile or view where it
    takes one (the count and the callee itself are checked with the entry rules)."""
    if op.name != "func.call":
        return []
    callee = module.function(str(op.attrs.get("callee", "")).lstrip("@"))
    if callee is None:
        return []
    for k, (x, want) in enumerate(zip(op.operands, callee.arg_types, strict=False)):
        have = types.get(x) if isinstance(x, str) else None
        if have is not None and isinstance(have, _NOT_SCALAR) != isinstance(want, _NOT_SCALAR):
            return [VerifyError(f"func.call: argument {k} ({x}) is a {have} but @{callee.name} takes a {want}",
                                op.loc)]
    return []


def _located(e: PtoError, op: A.Op) -> PtoError:
    if e.loc is None:
        e.loc = op.loc
    return e


def _type_env(fn: A.Function) -> dict:
    """SSA name -> the type the text gives it (arguments, results, region arguments)."""
    types: dict = dict(zip(fn.args, fn.arg_types, strict=False))
    for op in _walk(fn.body):
        for name, t in zip(op.results, op.result_types, strict=False):
            types[name] = t
        if op.name == "scf.for" and op.regions and op.regions[0].args:
            iv, *carried = op.regions[0].args
            types[iv] = A.ScalarType("index")
            types.update(zip(carried, op.result_types, strict=False))
        elif op.name == "scf.while" and op.regions:
            # before-region arguments take the inputs' types, after-region ones the results'
            types.update(zip(op.regions[0].args, op.operand_types or op.result_types, strict=False))
            for region in op.regions[1:]:
                types.update(zip(region.args, region.arg_types or op.result_types, strict=False))
        for region in op.regions:
            types.update((a, t) for a, t in zip(region.args, region.arg_types, strict=False) if a not in types)
    return types


def _entry_errors(module: A.Module, entry: A.Function) -> list[PtoError]:
    """A kernel entry returns nothing; no function reachable by calls calls itself; every call
    names a function and passes as many arguments as it takes."""
    errors: list[PtoError] = []
    if entry.result_types:
        shown = ", ".join(str(t) for t in entry.result_types)
        errors.append(VerifyError(f"the kernel entry @{entry.name} returns a value ({shown}); an entry "
                                  f"returns nothing (it writes its results through pointer arguments)",
                                  entry.loc))
    functions = {f.name: f for f in module.functions}
    calls: dict[str, list[tuple[str, A.Op]]] = {}
    for fn in module.functions:
        calls[fn.name] = []
        for op in _walk(fn.body):
            if op.name != "func.call":
                continue
            callee_name = str(op.attrs.get("callee", "")).lstrip("@")
            callee = functions.get(callee_name)
            if callee is None:
                errors.append(VerifyError(f"call to unknown function @{callee_name}", op.loc))
                continue
            if len(op.operands) != len(callee.args):
                errors.append(VerifyError(f"@{callee_name} takes {len(callee.args)} arguments, "
                                          f"{len(op.operands)} given", op.loc))
            calls[fn.name].append((callee_name, op))
    errors.extend(_recursion_errors(calls))
    return errors


def _recursion_errors(calls: dict[str, list[tuple[str, A.Op]]]) -> list[PtoError]:
    """One error per call that closes a cycle of calls (depth-first, iterative: no Python recursion)."""
    errors: list[PtoError] = []
    state: dict[str, int] = {}  # 1 on the current path, 2 done
    for root, root_calls in calls.items():
        if state.get(root):
            continue
        path: list[str] = [root]
        stack = [iter(root_calls)]
        state[root] = 1
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                stack.pop()
                continue
            callee, op = nxt
            if state.get(callee) == 1:
                cycle = " -> ".join(f"@{n}" for n in path[path.index(callee):] + [callee])
                errors.append(VerifyError(f"recursive call ({cycle}); kernels cannot recurse", op.loc))
            elif not state.get(callee):
                state[callee] = 1
                path.append(callee)
                stack.append(iter(calls[callee]))
    return errors
