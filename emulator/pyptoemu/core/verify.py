"""Whole-module verification before anything runs.

Every op of every function and of every branch is bound once, through the same
:func:`pyptoemu.core.binding.bind_op` the scalar unit runs (so what is checked is what runs). On
top of binding, what can be decided from the text alone is checked here: tile ops on the operand types the text declares (kinds, locations, dtypes, shapes, legal
moves for the machine: the same checks the issue step makes, on static shapes), the entry rules (a
kernel entry returns nothing, no function calls itself, calls match their callee), static tile
capacity, and what the text's integer constants decide (windows inside their views, addresses
aligned and inside their buffer, valid shapes, loop steps; the counts and types of returned, yielded
and carried values). Names are read through :class:`ptoisa.text.scopes.NameScope`: each op sees the
names of its region and the enclosing ones only. Every error is collected and reported at once,
each with its ``file:line:col`` (exit 2). Checks that depend on run-time values (computed valid
shapes, addresses and offsets, scalar arguments) stay with the steps.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

from ptoisa.dtypes import is_float, is_known, itemsize
from ptoisa.machine import Machine
from ptoisa.text import ast as A
from ptoisa.text.scopes import NameScope, walk
from pyptoemu.core import arith
from pyptoemu.core.aicore import AICore
from pyptoemu.core.control import memref_alloc_tile_type
from pyptoemu.core.crosscore import C2V, V2C
from pyptoemu.core.crossops import SIDE_OF
from pyptoemu.core.fold import fold_integer
from pyptoemu.core.scalar import FailedStep, ScalarUnit
from pyptoemu.core.tileop import TileOpBinding
from pyptoemu.errors import BoundsError, CapacityError, InputError, Loc, PtoError, VerifyError

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


def verify_module(module: A.Module, entry: A.Function, isa, machine: Machine) -> list[tuple[str, Loc]]:
    """Bind and check every op of ``module`` on a core that has every pipe and buffer of the machine
    (what a core of one kind lacks is said when that core runs the op); raise
    :class:`ModuleVerifyError` listing every error found. Returns the warnings (message, location):
    each operand the text passes that the emulator ignores (``role: ignored`` in the op table)."""
    su = AICore(module, isa, machine, check_uninitialised=False, label="verifier").scalar
    errors: list[PtoError] = []
    warnings: list[tuple[str, Loc]] = []
    errors.extend(_entry_errors(module, entry))
    errors.extend(_fifo_direction_errors(module))
    for fn in module.functions:
        errors.extend(_dtype_errors(fn.arg_types + fn.result_types, fn.loc, f"@{fn.name}"))
        scope = NameScope(fn, fold=fold_integer, implied_type=partial(_implied_result_type, isa))
        for op, parent in scope.walk():
            errors.extend(scope.use_errors)  # a name the op cannot see has no type for the checks below
            scope.use_errors.clear()
            bad_types = _dtype_errors(_op_types(op), op.loc, op.name)
            errors.extend(bad_types)
            if bad_types:
                continue  # binding would only trip over the same unknown type
            types, constants = scope.types, scope.constants
            errors.extend(_tile_type_errors(_op_types(op), op))
            errors.extend(_op_form_errors(op, types, constants))
            errors.extend(_attr_name_errors(op, isa))
            errors.extend(_attr_value_errors(op, isa))
            errors.extend(_scalar_operand_errors(op, types))
            errors.extend(_declared_scalar_errors(op, types))
            errors.extend(_declared_view_errors(op, types))
            errors.extend(_address_type_errors(op, types))
            errors.extend(_index_operand_errors(op, types))
            errors.extend(_element_type_errors(op, types))
            errors.extend(_operand_dtype_errors(op, isa, types))
            errors.extend(_pointer_operand_errors(op, types))
            errors.extend(_arith_type_errors(op, types))
            errors.extend(_yield_errors(op, parent, types))
            errors.extend(_call_errors(op, types, module))
            errors.extend(_static_value_errors(op, scope, machine))
            errors.extend(_bind_and_check(su, op, partial(_static_type, scope)))
            warnings.extend(_ignored_operands(su.steps.get(op), op))
            warnings.extend(_unknown_attribute_warnings(op, isa))
        errors.extend(scope.errors)
    if errors:
        errors.sort(key=lambda e: (e.loc is None, (e.loc.line, e.loc.col) if e.loc else (0, 0)))
        raise ModuleVerifyError(errors)
    return warnings


def _implied_result_type(isa, op: A.Op, k: int) -> A.Type | None:
    """The type of an op's result the text does not write, from the op's spec: a scalar result of an
    op with one dtype (``%b = pto.get_block_idx`` is an i64, isa_specs multicore.yaml), so the checks
    of its uses see it as MLIR does."""
    spec = isa.get(op.name) if op.name.startswith("pto.") else None
    if spec is None or k >= len(spec.outs) or "scalar" not in spec.outs[k].kinds or len(spec.dtypes) != 1:
        return None
    return A.ScalarType(spec.dtypes[0])


def _bind_and_check(su: ScalarUnit, op: A.Op, type_of: Callable[[str], Any]) -> list[PtoError]:
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
            binding.check_static(type_of)
        except InputError as e:
            return [_located(e, op)]
        except (BoundsError, CapacityError) as e:  # decided by the types alone: the text is wrong
            return [VerifyError(e.message, e.loc or op.loc)]
    return []


def _ignored_operands(step, op: A.Op) -> list[tuple[str, Loc]]:
    """A warning per operand ``op`` passes that the op table marks ``role: ignored``: the run goes
    on as the reference model does, without it, and says so rather than silently (a pre-quant scalar
    on ``tstore``: the quantization it selects on hardware is target-defined)."""
    binding = getattr(step, "__self__", None)
    if not isinstance(binding, TileOpBinding):
        return []
    why = "as in the reference model (what it selects on hardware is target-defined): values may differ"
    return [(f"{op.name}: its {spec.name} operand {name} is ignored, {why} from the hardware's", op.loc)
            for spec, name in zip(binding.in_specs, binding.ins, strict=False) if spec.is_ignored]


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


def _tile_type_errors(types: list, op: A.Op) -> list[PtoError]:
    """A tile type whose enum fields are out of range (§5.3: the assembler checks fractal and the
    enum ranges): said where the type is written."""
    for t in types:
        if not isinstance(t, A.TileBufType):
            continue
        if t.rows < 1 or t.cols < 1:
            return [VerifyError(f"{op.name}: rows={t.rows}, cols={t.cols} in {t}; rows and cols are positive "
                                f"(§2.5)", op.loc)]
        if t.fractal not in _FRACTALS:
            return [VerifyError(f"{op.name}: fractal={t.fractal} in {t}; fractal is one of "
                                f"{', '.join(map(str, _FRACTALS))}", op.loc)]
        if t.pad not in _PADS or t.compact not in _COMPACTS:
            return [VerifyError(f"{op.name}: pad={t.pad}, compact={t.compact} in {t}; pad is 0..3 (null, zero, max, "
                                f"min), compact 0..2", op.loc)]
    return []


def _attr_name_errors(op: A.Op, isa) -> list[PtoError]:
    """An attribute spelled almost like one of the op's own (``{cmpMod = #pto<cmp lt>}`` for
    ``cmpMode``) is a typo: ignored as a discardable attribute, the op would run with its default
    (``eq``) and give a wrong number. Keys far from every attribute of the op stay discardable."""
    spec = isa.get(op.name) if op.name.startswith("pto.") else None
    if spec is None or not spec.attrs:
        return []
    known = list(spec.attrs)
    for key in op.attrs:
        if key in spec.attrs:
            continue
        near = [k for k in known if k.lower() == key.lower()] or difflib.get_close_matches(key, known, n=1,
                                                                                           cutoff=0.8)
        if near:
            return [VerifyError(f"{op.name}: unknown attribute '{key}' (did you mean '{near[0]}'? this op's "
                                f"attributes: {', '.join(known)})", op.loc)]
    return []


# MLIR's generic form carries the operand counts as a property; it is no attribute of the op.
_FORM_PROPERTIES = frozenset({"operandSegmentSizes"})


def _unknown_attribute_warnings(op: A.Op, isa) -> list[tuple[str, Loc]]:
    """A tile op's attribute its spec does not list, and too far from every listed name to be a typo
    (:func:`_attr_name_errors`): MLIR keeps it as a discardable attribute and the spec gives it no
    meaning, so the op runs as if it were absent; a warning at the op says so, since the author
    meant something by it (``{roundMode = ...}`` on an op that has no rounding). Ops the core itself
    executes read attributes the op table does not list (``split``, ``dir_mask``): not checked."""
    spec = isa.get(op.name) if op.name.startswith("pto.") else None
    if spec is None or spec.is_core:
        return []
    listed = f"its attributes: {', '.join(spec.attrs)}" if spec.attrs else "it takes none"
    return [(f"{op.name}: attribute '{key}' is not one of this op's ({listed}); ignored", op.loc)
            for key in op.attrs if key not in spec.attrs and key not in _FORM_PROPERTIES]


def _attr_value_errors(op: A.Op, isa) -> list[PtoError]:
    """An attribute the op's spec types as an enum holds a value of that enum: a value the dialect does
    not have (``atomic_type atomic_sub``, ``saturation_mode CLAMP``) would otherwise run as the default
    (a plain store, no saturation) or stop the run as a kernel fault, and it is the text that is wrong."""
    spec = isa.get(op.name) if op.name.startswith("pto.") else None
    if spec is None:
        return []
    errors: list[PtoError] = []
    for key, value in op.attrs.items():
        attr = spec.attrs.get(key)
        allowed = isa.attr_kinds.get(attr.type) if attr is not None else None  # None: a literal type
        if allowed is None:
            continue
        kind = value.kind if isinstance(value, A.EnumAttr) else attr.type if isinstance(value, str) else None
        text = getattr(value, "value", value)
        if kind != attr.type:
            shown = f"#pto<{value.kind} {value.value}>" if isinstance(value, A.EnumAttr) else text
            errors.append(VerifyError(f"{op.name}: {key} = {shown} is not a {attr.type} (write "
                                      f"#pto<{attr.type} VALUE>)", op.loc))
        elif str(text).lower() not in {v.lower() for v in allowed}:
            errors.append(VerifyError(f"{op.name}: {key} = #pto<{kind} {text}> is not a value of {kind} (one of "
                                      f"{', '.join(allowed)})", op.loc))
    return errors


def _op_form_errors(op: A.Op, types: Mapping, constants: Mapping) -> list[PtoError]:
    """Rules §4.1 states for views and aliases, decided from the types the text gives."""
    name, loc = op.name, op.loc
    src = types.get(op.operands[0]) if op.operands and isinstance(op.operands[0], str) else None
    res = op.result_types[0] if op.result_types else None
    if name == "pto.make_tensor_view" and isinstance(src, A.PtrType) and isinstance(res, A.TensorViewType) \
            and src.elem != res.elem:
        return [VerifyError(f"{name}: the pointer's elements are {src.elem} but the view's {res.elem} "
                            f"(they must agree)", loc)]
    if name in ("pto.treshape", "pto.bitcast") and isinstance(src, A.TileBufType) and isinstance(res, A.TileBufType):
        return _alias_errors(name, src, res, loc)
    if name == "pto.set_validshape" and isinstance(src, A.TileBufType):
        if src.v_row is not None or src.v_col is not None:
            return [VerifyError(f"{name}: {op.operands[0]} has the valid shape {src.valid_text} "
                                f"in its type; set_validshape needs a tile typed v_row=?, v_col=?", loc)]
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


def _scalar_operand_errors(op: A.Op, types: Mapping) -> list[PtoError]:
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
        if positions is not None and _is_float_type(t):
            return [VerifyError(f"{op.name}: {what} ({x}) must be an index or an integer, but it is {t.name} "
                                f"(convert it first, e.g. arith.fptosi then arith.index_cast)", op.loc)]
        if op.name in _CONDITION_OPS and what == "operand 0" and isinstance(t, A.ScalarType) and t.name != "i1":
            return [VerifyError(f"{op.name}: the condition {x} is {t.name}, not i1 (compare it first, e.g. "
                                f"arith.cmpi ne, {x}, %zero)", op.loc)]
    return []


_CONDITION_OPS = ("scf.if", "scf.condition")


def _is_float_type(t: Any) -> bool:
    """A float scalar type (an unknown type name is reported on its own and is not one)."""
    return isinstance(t, A.ScalarType) and is_known(t.name) and is_float(t.name)


def _declared_scalar_errors(op: A.Op, types: Mapping) -> list[PtoError]:
    """A pto op lists each operand's type after the operands (``ins(%t, %s : TB, f32)``); for a scalar
    that type is the value's own type (MLIR checks it at every use). Written otherwise (an index
    written as f32) the op would read the value as the type written, not as the type it has."""
    if not op.name.startswith("pto."):
        return []
    pairs = [*zip(op.ins, op.in_types, strict=False), *zip(op.operands, op.operand_types, strict=False)]
    for x, written in pairs:
        have = types.get(x) if isinstance(x, str) else None
        if isinstance(have, A.ScalarType) and isinstance(written, A.ScalarType) and have.name != written.name:
            return [VerifyError(f"{op.name}: {x} is {have.name} but written here as {written.name} (convert it "
                                f"first, e.g. arith.index_cast or arith.sitofp)", op.loc)]
    return []


def _declared_view_errors(op: A.Op, types: Mapping) -> list[PtoError]:
    """A view's type written at a use (``tload ins(%pv : !pto.partition_tensor_view<8x64xf32>)``) is
    the type the view was made with: MLIR checks every use against the value's type, and a use that
    says 8 rows of f32 for a 16-row f16 window would otherwise be read as the window it is, silently.
    A dynamic dim (``?``) on either side matches any size."""
    if not op.name.startswith("pto."):
        return []
    pairs = [*zip(op.ins, op.in_types, strict=False), *zip(op.outs, op.out_types, strict=False),
             *zip(op.operands, op.operand_types, strict=False)]
    for x, written in pairs:
        have = types.get(x) if isinstance(x, str) else None
        if not isinstance(have, _VIEW_TYPES) or not isinstance(written, _VIEW_TYPES):
            continue
        if not _same_view_type(have, written):
            return [VerifyError(f"{op.name}: {x} is a {have} but written here as {written}", op.loc)]
    return []


_VIEW_TYPES = (A.TensorViewType, A.PartitionViewType)


def _same_view_type(have: A.Type, written: A.Type) -> bool:
    """Same kind of view, element type and rank, and equal sizes where both are static."""
    return (type(have) is type(written) and have.elem == written.elem and len(have.shape) == len(written.shape)
            and all(a is None or b is None or a == b for a, b in zip(have.shape, written.shape, strict=True)))


def _address_type_errors(op: A.Op, types: Mapping) -> list[PtoError]:
    """A level-3 address (``alloc_tile addr = %a``, ``tassign %t, %a``) is an i64 byte offset
    (pto-text-format §4.1: "addr = %a (i64)"; §2.1: "i64 for alloc_tile addr"). An index there is
    a loop variable or an element count mistaken for bytes far more often than not, and MLIR
    rejects it: the author converts it on purpose (arith.index_cast %i : index to i64)."""
    if op.name == "pto.alloc_tile":
        addr = (op.groups.get("addr") or [None])[0]
    elif op.name == "pto.tassign" and len(op.operands) > 1:
        addr = op.operands[1]
    else:
        return []
    have = types.get(addr) if isinstance(addr, str) else None
    if isinstance(have, A.ScalarType) and have.name != "i64":
        return [VerifyError(f"{op.name}: the address {addr} is {have.name}; a tile address is an i64 byte offset "
                            f"(convert it first, e.g. arith.index_cast {addr} : {have.name} to i64)", op.loc)]
    return []


# Operands the spec types ``index`` (pto-text-format §2.1: "index: shapes, strides, offsets, valid
# sizes, event ids"; §4.1 per op), by op: positions in ``op.operands`` and operand groups.
_INDEX_POSITIONS: dict[str, tuple[tuple[int, ...], tuple[str, ...]]] = {
    "pto.alloc_tile": ((), ("valid_row", "valid_col")),
    "pto.make_tensor_view": ((), ("shape", "strides")),
    "pto.partition_view": ((), ("offsets", "sizes")),
    "pto.subview": ((), ("offsets", "sizes")),
    "pto.set_validshape": ((1, 2), ()),
    "pto.subset": ((1, 2), ("sizes",)),
    "pto.get_tensor_view_dim": ((1,), ()),
    "pto.set_flag_dyn": ((0,), ()),
    "pto.wait_flag_dyn": ((0,), ()),
}


def _index_operand_errors(op: A.Op, types: Mapping) -> list[PtoError]:
    """A shape, stride, offset, valid size or event id is an ``index``; an integer of another type
    there (an i64 from get_block_idx, an i32 argument) is refused as MLIR refuses it, the way an
    index where an i64 address is wanted is (:func:`_address_type_errors`): the spec pairs the two
    on purpose (§2.1: "i64 for alloc_tile addr, block ids"; §3.1 ``arith.index_cast %x : i64 to
    index``), so a block id becomes an offset only through a cast the author writes."""
    positions, groups = _INDEX_POSITIONS.get(op.name, ((), ()))
    named = [(f"operand {i}", op.operands[i]) for i in positions if i < len(op.operands)]
    named += [(f"'{g}'", x) for g in groups for x in op.groups.get(g, [])]
    for what, x in named:
        have = types.get(x) if isinstance(x, str) else None
        if isinstance(have, A.ScalarType) and is_known(have.name) and not is_float(have.name) \
                and have.name not in ("index", "i1"):
            return [VerifyError(f"{op.name}: {what} ({x}) is {have.name}; shapes, strides, offsets, valid sizes "
                                f"and event ids are index (convert it first, e.g. arith.index_cast {x} : "
                                f"{have.name} to index)", op.loc)]
    return []


def _element_type_errors(op: A.Op, types: Mapping) -> list[PtoError]:
    """A one-element access has the element's type: ``tgetval`` and ``load_scalar`` give the tile's
    (pointer's) element type, ``store_scalar`` writes a value of it. Written with another type, the
    value went through untouched: a tgetval "f16" of an f32 element kept every f32 bit (3 + 1.1 gave
    4.1, where an f16 1.1 gives 4.0996)."""
    if op.name == "pto.tgetval" and op.ins and op.result_types:
        src = types.get(op.ins[0]) if isinstance(op.ins[0], str) else None
        have, written, what = getattr(src, "dtype", None), op.result_types[0], f"{op.ins[0]} holds"
    elif op.name == "pto.load_scalar" and op.operands and op.result_types:
        src = types.get(op.operands[0]) if isinstance(op.operands[0], str) else None
        have, written, what = getattr(src, "elem", None), op.result_types[0], f"{op.operands[0]} points to"
    elif op.name == "pto.store_scalar" and len(op.operands) > 1:
        ptr = types.get(op.operands[1]) if isinstance(op.operands[1], str) else None
        value = types.get(op.operands[0]) if isinstance(op.operands[0], str) else None
        have, written, what = getattr(ptr, "elem", None), value, f"{op.operands[1]} points to"
    else:
        return []
    if have is None or not isinstance(written, A.ScalarType) or written.name == have:
        return []
    return [VerifyError(f"{op.name}: {what} {have} elements but the value is {written.name}; an element access has "
                        f"the element's type (convert the value itself, e.g. arith.truncf or arith.extf)", op.loc)]


# Operands the core reads as a GM pointer or a view, by op: position in ``op.operands`` and what it must be
# (a number or a tile there is an error).
_POINTER_POSITIONS: dict[str, tuple[int, str]] = {
    "pto.addptr": (0, "a !pto.ptr"), "pto.make_tensor_view": (0, "a !pto.ptr"),
    "pto.load_scalar": (0, "a !pto.ptr"), "pto.store_scalar": (1, "a !pto.ptr"),
    "pto.get_tensor_view_dim": (0, "a view"), "pto.partition_view": (0, "a view"),
}


def _operand_dtype_errors(op: A.Op, isa, types: Mapping) -> list[PtoError]:
    """A tile operand whose op-table entry lists its own dtypes (an arg reduction's dst holds
    indices: i32 or ui32, pto-text-format §4.6) has one of them. The core checks the entry's dtypes
    on the operand the op's domain follows only, so a float index tile would otherwise run."""
    spec = isa.get(op.name) if op.name.startswith("pto.") else None
    if spec is None or not op.is_dps:
        return []
    for names, specs in ((op.ins, spec.ins), (op.outs, spec.outs)):
        for x, operand in zip(names, specs, strict=False):
            t = types.get(x) if isinstance(x, str) else None
            if operand.dtypes and isinstance(t, A.TileBufType) and t.dtype not in operand.dtypes:
                return [VerifyError(f"{op.name}: {operand.name} {x} is {t.dtype}; this operand is one of "
                                    f"{', '.join(operand.dtypes)}", op.loc)]
    return []


def _pointer_operand_errors(op: A.Op, types: Mapping) -> list[PtoError]:
    """A number or a tile where the op reads a GM pointer or a view."""
    where = _POINTER_POSITIONS.get(op.name)
    if where is None or len(op.operands) <= where[0]:
        return []
    k, what = where
    x = op.operands[k]
    t = types.get(x) if isinstance(x, str) else None
    if isinstance(x, int) or isinstance(t, (A.ScalarType, A.TileBufType)):
        return [VerifyError(f"{op.name}: operand {k} ({x}) must be {what}, but it is "
                            f"{'a ' + str(t) if t is not None else 'a number'}", op.loc)]
    return []


# §3.1: the arith ops that take integers (index, iN) and those that take floats.
_INT_ARITH = frozenset("arith." + n for n in (
    "addi", "subi", "muli", "divsi", "divui", "remsi", "remui", "ceildivsi", "floordivsi", "ceildivui", "minsi",
    "maxsi", "minui", "maxui", "andi", "ori", "xori", "shli", "shrsi", "shrui", "cmpi"))
_FLOAT_ARITH = frozenset("arith." + n for n in (
    "addf", "subf", "mulf", "divf", "remf", "maximumf", "minimumf", "maxnumf", "minnumf", "negf", "cmpf"))


def _arith_type_errors(op: A.Op, types: Mapping) -> list[PtoError]:
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
    written = op.operand_types[-1]
    if op.name in _INT_ARITH and _is_float_type(written):
        return [VerifyError(f"{op.name}: an integer op written for {written.name} (use the float op, e.g. "
                            f"arith.cmpf or arith.addf)", op.loc)]
    if op.name in _FLOAT_ARITH and isinstance(written, A.ScalarType) and is_known(written.name) \
            and not is_float(written.name):
        return [VerifyError(f"{op.name}: a float op written for {written.name} (use the integer op, e.g. "
                            f"arith.cmpi or arith.addi)", op.loc)]
    if len(wanted) == 1:
        wanted = wanted * len(operands)
    for x, want in zip(operands, wanted, strict=False):
        have = types.get(x) if isinstance(x, str) else None
        if isinstance(have, A.ScalarType) and isinstance(want, A.ScalarType) and have.name != want.name:
            return [VerifyError(f"{op.name}: operand {x} is {have.name} but the op is written for {want.name} "
                                f"(convert it first, e.g. arith.index_cast)", op.loc)]
    return []


def _yield_errors(op: A.Op, parent: A.Op | None, types: Mapping) -> list[PtoError]:
    """What an scf.for or scf.if yields is of the kind of its results (a number where a number is
    carried, a tile where a tile is). Checked at the yield, where the yielded names are in scope."""
    if op.name in ("scf.yield", "scf.condition") and (parent is None or not parent.name.startswith("scf.")):
        return [VerifyError(f"{op.name} outside an scf region: it ends the body of an scf.for, scf.if or "
                            f"scf.while", op.loc)]
    if parent is not None and parent.name == "scf.while":
        return _while_yield_errors(op, parent)
    if op.name != "scf.yield" or parent is None or parent.name not in ("scf.for", "scf.if"):
        return []
    if len(op.operands) != len(parent.result_types):
        return [VerifyError(f"scf.yield: {len(op.operands)} values yielded but {parent.name} has "
                            f"{len(parent.result_types)} results", op.loc)]
    for k, (x, want) in enumerate(zip(op.operands, parent.result_types, strict=False)):
        have = types.get(x) if isinstance(x, str) else None
        if have is not None and isinstance(have, _NOT_SCALAR) != isinstance(want, _NOT_SCALAR):
            return [VerifyError(f"scf.yield: value {k} ({x}) is a {have} but {parent.name} carries a "
                                f"{want} there", op.loc)]
        if isinstance(have, A.TileBufType) and isinstance(want, A.TileBufType) and _tile_kind(have) != _tile_kind(want):
            # the next iteration (or the code after the if) would use it as the other tile
            return [VerifyError(f"scf.yield: value {k} ({x}) is a {_tile_text(have)} tile but {parent.name} carries "
                                f"a {_tile_text(want)} tile there", op.loc)]
    return []


def _tile_kind(t: A.TileBufType) -> tuple:
    return t.loc, t.dtype, t.rows, t.cols


def _tile_text(t: A.TileBufType) -> str:
    return f"{t.loc} {t.rows}x{t.cols}x{t.dtype}"


def _while_yield_errors(op: A.Op, loop: A.Op) -> list[PtoError]:
    """scf.condition passes one value per result of the while; the after-region's scf.yield one
    per argument of the before-region (the next iteration's inputs)."""
    if op.name == "scf.condition":
        given, want, what = len(op.operands) - 1, len(loop.results), "results of the scf.while"
    elif op.name == "scf.yield":
        given, want, what = len(op.operands), len(loop.operands), "inputs of the scf.while"
    else:
        return []
    if given != want:
        return [VerifyError(f"{op.name}: {given} values passed but there are {want} {what}", op.loc)]
    return []


def _call_errors(op: A.Op, types: Mapping, module: A.Module) -> list[PtoError]:
    """A call passes a number where its callee takes a number, a pointer, tile or view where it
    takes one (the count and the callee itself are checked with the entry rules)."""
    if op.name != "func.call":
        return []
    callee = module.function(str(op.attrs.get("callee", "")).lstrip("@"))
    if callee is None:
        return []
    if len(op.results) != len(callee.result_types):
        return [VerifyError(f"func.call: @{callee.name} returns {len(callee.result_types)} values but the call "
                            f"binds {len(op.results)}", op.loc)]
    for k, (x, want) in enumerate(zip(op.operands, callee.arg_types, strict=False)):
        have = types.get(x) if isinstance(x, str) else None
        if have is not None and isinstance(have, _NOT_SCALAR) != isinstance(want, _NOT_SCALAR):
            return [VerifyError(f"func.call: argument {k} ({x}) is a {have} but @{callee.name} takes a {want}",
                                op.loc)]
    return []


def _static_value_errors(op: A.Op, scope: NameScope, machine: Machine) -> list[PtoError]:
    """What the run would fault on, decided before it runs from the integer constants the op
    reads: bounds, steps, addresses, valid shapes, and a return or carried value of the wrong type."""
    check = _STATIC_CHECKS.get(op.name)
    return check(op, scope, machine) if check is not None else []


def _return_errors(op: A.Op, scope: NameScope, machine: Machine) -> list[PtoError]:
    """``return`` gives exactly the values of the function's result types (none for a kernel)."""
    want = scope.fn.result_types
    if len(op.operands) != len(want):
        return [VerifyError(f"return gives {len(op.operands)} values but @{scope.fn.name} returns {len(want)}",
                            op.loc)]
    for x, t in zip(op.operands, want, strict=False):
        have = scope.types.get(x) if isinstance(x, str) else None
        if have is not None and _kind_or_scalar(have) != _kind_or_scalar(t):
            return [VerifyError(f"return: {x} is a {have} but @{scope.fn.name} returns a {t} there", op.loc)]
    return []


def _kind_or_scalar(t) -> object:
    """A scalar type by its name, any other type by its class (tile shapes may be refined)."""
    return t.name if isinstance(t, A.ScalarType) else type(t)


def _for_errors(op: A.Op, scope: NameScope, machine: Machine) -> list[PtoError]:
    """The bounds have the loop's type; a constant step is positive; each carried value starts with
    the type the loop carries."""
    bound = _for_bound_errors(op, scope)
    if bound:
        return bound
    step = _constant(op.operands[2], scope) if len(op.operands) > 2 else None
    if step is not None and step <= 0:
        return [VerifyError(f"scf.for step must be positive, got {step}", op.loc)]
    for k, (x, want) in enumerate(zip(op.operands[3:], op.result_types, strict=False)):
        have = scope.types.get(x) if isinstance(x, str) else None
        if have is not None and _kind_or_scalar(have) != _kind_or_scalar(want):
            return [VerifyError(f"scf.for: iter_arg {k} starts as {x}, a {have}, but the loop carries a {want}",
                                op.loc)]
    return []


_FOR_OPERANDS = ("lower bound", "upper bound", "step")


def _for_bound_errors(op: A.Op, scope: NameScope) -> list[PtoError]:
    """``lb``, ``ub`` and ``step`` are ``index``, or all of the integer type written after the loop
    (``scf.for %i = %a to %b step %c : i32``, which is also the induction variable's type:
    pto-text-format §3.2). An i32 bound of an index loop is not converted silently, as nowhere else
    an integer of one width stands for another (the arith ops, view offsets, tile addresses)."""
    body = op.regions[0] if op.regions else None
    loop_type = body.arg_types[0] if body is not None and body.arg_types else A.ScalarType("index")
    if _is_float_type(loop_type) or (isinstance(loop_type, A.ScalarType) and loop_type.name == "i1"):
        return [VerifyError(f"scf.for: a loop counts in index or an integer type, not {loop_type}", op.loc)]
    for what, x in zip(_FOR_OPERANDS, op.operands[:3], strict=False):
        have = scope.types.get(x) if isinstance(x, str) else None
        if not isinstance(have, A.ScalarType) or _is_float_type(have) or have.name == loop_type.name:
            continue
        if loop_type.name == "index":
            return [VerifyError(f"scf.for: the {what} {x} is {have.name}, but a loop's bounds are index "
                                f"(arith.index_cast it first, or write the loop for {have.name}: "
                                f"'scf.for ... step ... : {have.name}')", op.loc)]
        return [VerifyError(f"scf.for: the {what} {x} is {have.name}, but the loop is written for "
                            f"{loop_type.name} (': {loop_type.name}': its bounds and step are {loop_type.name})",
                            op.loc)]
    return []


def _scalar_access_errors(op: A.Op, scope: NameScope, machine: Machine) -> list[PtoError]:
    """tgetval / tsetval at a constant linear offset outside the tile's static shape, and
    get_tensor_view_dim of a constant dim outside the view's rank: the text decides them."""
    if op.name == "pto.get_tensor_view_dim":
        view = scope.types.get(op.operands[0]) if op.operands and isinstance(op.operands[0], str) else None
        dim = _constant(op.operands[1], scope) if len(op.operands) > 1 else None
        if isinstance(view, A.TensorViewType) and dim is not None and not 0 <= dim < len(view.shape):
            return [VerifyError(f"{op.name}: dim {dim} of a rank-{len(view.shape)} view", op.loc)]
        return []
    tile_name, off = (op.ins[0], op.ins[1]) if op.name == "pto.tgetval" and len(op.ins) > 1 else \
        (op.outs[0], op.ins[0]) if op.name == "pto.tsetval" and op.outs and op.ins else (None, None)
    tile = scope.types.get(tile_name) if isinstance(tile_name, str) else None
    k = _constant(off, scope) if off is not None else None
    if isinstance(tile, A.TileBufType) and k is not None and not 0 <= k < tile.rows * tile.cols:
        return [VerifyError(f"{op.name}: offset {k} outside the {tile.rows}x{tile.cols} tile {tile_name} "
                            f"({tile.rows * tile.cols} elements)", op.loc)]
    return []


def _endless_while_errors(op: A.Op, scope: NameScope, machine: Machine) -> list[PtoError]:
    """An scf.while that can never end, decided from the text: its after region yields back its own
    arguments, and its before region hands its arguments to scf.condition as they are, so every
    iteration starts from the values the loop was entered with; when those and everything the
    condition is computed from are constants and the condition holds for them, it holds forever.
    Run, such a loop would spin to the step limit (about 5 us per empty iteration in the scalar
    unit's interpreter: 10 M iterations take most of a minute) before being stopped."""
    if len(op.regions) != 2 or not op.regions[0].ops or not op.regions[1].ops:
        return []
    before, after = op.regions
    cond, back = before.ops[-1], after.ops[-1]
    if cond.name != "scf.condition" or back.name != "scf.yield" or not cond.operands:
        return []
    if cond.operands[1:] != before.args or back.operands != after.args or len(before.args) != len(op.operands):
        return []
    if any(inner.name == "pto.trap" for region in op.regions for inner in walk(region)):
        return []  # a loop that traps out of itself ends the kernel on purpose
    known: dict = dict(scope.constants)
    for arg, init in zip(before.args, op.operands, strict=True):
        value = init if isinstance(init, int) else scope.constants.get(init)
        if value is None:
            return []  # entered with a run-time value: the run decides (and stops it at the step limit)
        known[arg] = value
    for inner in before.ops[:-1]:
        value = _fold_condition_op(inner, known)
        if value is not None and inner.results:
            known[inner.results[0]] = value
    if known.get(cond.operands[0]) is not True:
        return []
    return [VerifyError(f"scf.while never ends: its after region yields its arguments unchanged, so every iteration "
                        f"computes the condition {cond.operands[0]} from the same constants, and it is true", op.loc)]


def _fold_condition_op(op: A.Op, known: Mapping) -> int | bool | None:
    """The value of an integer arith op, an i1 constant or an integer compare over known values."""
    if op.name == "arith.constant" and isinstance(op.attrs.get("value"), bool):
        return op.attrs["value"]
    if op.name == "arith.cmpi" and len(op.operands) == 2 and op.operand_types:
        pred = arith.CMPI.get(str(op.attrs.get("predicate")))
        a, b = (known.get(x) if isinstance(x, str) else x for x in op.operands)
        t = op.operand_types[0]
        if pred is None or not isinstance(a, int) or not isinstance(b, int) or not isinstance(t, A.ScalarType):
            return None
        return bool(pred(a, b, t.name))
    return fold_integer(op, {k: v for k, v in known.items() if not isinstance(v, bool)})


def _alloc_errors(op: A.Op, scope: NameScope, machine: Machine) -> list[PtoError]:
    """Constant valid dims within the shape; a constant address aligned and inside the buffer."""
    t = op.result_types[0] if op.result_types else None
    if not isinstance(t, A.TileBufType):
        return []
    const = {g: _constant(op.groups[g][0], scope) for g in ("addr", "valid_row", "valid_col") if op.groups.get(g)}
    vr, vc = const.get("valid_row"), const.get("valid_col")
    if (vr is not None and not 0 <= vr <= t.rows) or (vc is not None and not 0 <= vc <= t.cols):
        return [VerifyError(f"pto.alloc_tile: valid region {vr if vr is not None else '?'}x"
                            f"{vc if vc is not None else '?'} outside the tile shape {t.rows}x{t.cols}", op.loc)]
    return _address_errors(op, t, const.get("addr"), machine)


def _address_errors(op: A.Op, t: A.TileBufType, addr: int | None, machine: Machine) -> list[PtoError]:
    """A constant level-3 address (alloc_tile addr, tassign) is aligned and the tile fits after it."""
    buf = machine.buffers.get(t.loc)
    if addr is None or buf is None or not is_known(t.dtype):
        return []
    if addr % buf.align:
        return [VerifyError(f"{op.name}: address {addr} in {buf.name} is not a multiple of its "
                            f"{buf.align}-byte alignment", op.loc)]
    need = t.rows * t.cols * itemsize(t.dtype)  # at least: a boxed layout may span more
    if addr < 0 or addr + need > buf.size:
        return [VerifyError(f"{op.name}: {need} bytes at address {addr} exceed {buf.name} capacity of "
                            f"{buf.size} bytes", op.loc)]
    return []


def _tassign_errors(op: A.Op, scope: NameScope, machine: Machine) -> list[PtoError]:
    """``tassign %t, %addr`` at a constant address: aligned and inside the buffer, as alloc_tile's."""
    t = op.result_types[0] if op.result_types else None
    if not isinstance(t, A.TileBufType) or len(op.operands) < 2:
        return []
    return _address_errors(op, t, _constant(op.operands[1], scope), machine)


def _event_id_errors(op: A.Op, scope: NameScope, machine: Machine) -> list[PtoError]:
    """A flag or cross-core signal id given as a constant SSA value is in the machine's range, as a
    literal one must be (set_flag_dyn / wait_flag_dyn: event ids; sync.set / sync.wait: signal ids)."""
    eid = _constant(op.operands[0], scope) if op.operands else None
    if eid is None:
        return []
    if op.name in ("pto.sync.set", "pto.sync.wait"):
        n = int(machine.params.get("cross_core_ids", 16))
        what = f"signal id {eid} is out of range: {machine.name} has ids 0..{n - 1}"
    else:
        n = machine.event_ids
        what = f"event id {eid} is out of range: {machine.name} has EVENT_ID0..EVENT_ID{n - 1}"
    return [] if 0 <= eid < n else [VerifyError(f"{op.name}: {what}", op.loc)]


def _partition_errors(op: A.Op, scope: NameScope, machine: Machine) -> list[PtoError]:
    """Constant sizes are the result type's static dims (the type is the window, §2.4), and a
    window of constant offsets and sizes lies inside a parent of known shape."""
    offs = [_constant(x, scope) for x in op.groups.get("offsets", [])]
    sizes = [_constant(x, scope) for x in op.groups.get("sizes", [])]
    res = op.result_types[0] if op.result_types else None
    shape = getattr(res, "shape", None)
    if shape is not None and len(shape) == len(sizes):
        for d, (z, n) in enumerate(zip(sizes, shape, strict=False)):
            if z is not None and n is not None and z != n:
                return [VerifyError(f"{op.name}: size {z} of dim {d} but the result type {res} says {n}", op.loc)]
    parent = _static_shape(op.operands[0], scope) if op.operands else None
    if parent is None or len(parent) != len(offs) or len(parent) != len(sizes):
        return []
    for d, (o, z, n) in enumerate(zip(offs, sizes, parent, strict=False)):
        if None not in (o, z, n) and (o < 0 or z < 0 or o + z > n):
            return [VerifyError(f"{op.name}: dim {d} window [{o}, {o + z}) is outside the view's size {n}", op.loc)]
    return []


def _constant(x: A.Operand, scope: NameScope) -> int | None:
    """An operand's integer value when the text fixes it (a literal or an arith.constant)."""
    if isinstance(x, bool):
        return None
    return x if isinstance(x, int) else scope.constants.get(x)


def _tensor_view_errors(op: A.Op, scope: NameScope, machine: Machine) -> list[PtoError]:
    """A constant dimension of a tensor view is not negative."""
    shape = [_constant(x, scope) for x in op.groups.get("shape", [])]
    if any(n is not None and n < 0 for n in shape):
        return [VerifyError(f"{op.name}: negative dimension in shape "
                            f"[{', '.join('?' if n is None else str(n) for n in shape)}]", op.loc)]
    return []


def _static_shape(name: A.Operand, scope: NameScope) -> list | None:
    """The shape of a tensor or partition view as far as constants and its type tell (None per
    unknown dim), or None."""
    if not isinstance(name, str):
        return None
    d = scope.defs.get(name)
    if d is not None and d.name == "pto.make_tensor_view" and d.groups.get("shape"):
        return [_constant(x, scope) for x in d.groups["shape"]]
    t = scope.types.get(name)
    shape = getattr(t, "shape", None) if isinstance(t, (A.TensorViewType, A.PartitionViewType)) else None
    return list(shape) if shape else None


def _window_errors(op: A.Op, scope: NameScope, machine: Machine) -> list[PtoError]:
    """textract / tinsert at constant (row, col): the moved window lies inside the bigger tile."""
    if len(op.ins) < 3 or not op.outs:
        return []
    r, c = (_constant(x, scope) for x in op.ins[1:3])
    src, dst = scope.types.get(op.ins[0]), scope.types.get(op.outs[0])
    if r is None or c is None or not isinstance(src, A.TileBufType) or not isinstance(dst, A.TileBufType):
        return []
    small, big = (dst, src) if op.name == "pto.textract" else (src, dst)
    vr = small.v_row if small.v_row is not None else small.rows
    vc = small.v_col if small.v_col is not None else small.cols
    if r < 0 or c < 0 or r + vr > big.rows or c + vc > big.cols:
        side = "source" if op.name == "pto.textract" else "destination"
        return [VerifyError(f"{op.name}: window at ({r}, {c}) of {vr}x{vc} leaves the {big.rows}x{big.cols} {side}",
                            op.loc)]
    return []


def _transfer_errors(op: A.Op, scope: NameScope, machine: Machine) -> list[PtoError]:
    """tload / tprefetch / tstore between a tile of static valid shape and a window of static shape: the
    tile's valid region fits the window (§5.6; the run would stop at the op as a bounds fault, but the
    types alone decide it)."""
    if not op.ins or not op.outs:  # the generic form (operands only): left to the run
        return []
    tile_name, view_name = (op.outs[0], op.ins[0]) if op.name != "pto.tstore" else (op.ins[0], op.outs[0])
    tile = scope.types.get(tile_name) if isinstance(tile_name, str) else None
    view = scope.types.get(view_name) if isinstance(view_name, str) else None
    if not isinstance(tile, A.TileBufType) or not isinstance(view, A.PartitionViewType):
        return []
    shape = _static_shape(view_name, scope)
    if not shape or None in shape or tile.v_row is None or tile.v_col is None:
        return []
    rows = 1
    for n in shape[:-1]:
        rows *= n
    if tile.v_row > rows or tile.v_col > shape[-1]:
        return [VerifyError(f"{op.name}: the tile's valid region {tile.valid_text} exceeds the {rows}x{shape[-1]} "
                            f"GM window {view_name}", op.loc)]
    return []


_STATIC_CHECKS = {
    "func.return": _return_errors, "scf.for": _for_errors, "scf.while": _endless_while_errors,
    "pto.alloc_tile": _alloc_errors,
    "pto.partition_view": _partition_errors, "pto.subview": _partition_errors, "pto.textract": _window_errors,
    "pto.tinsert": _window_errors, "pto.make_tensor_view": _tensor_view_errors, "pto.tassign": _tassign_errors,
    "pto.set_flag_dyn": _event_id_errors, "pto.wait_flag_dyn": _event_id_errors, "pto.sync.set": _event_id_errors,
    "pto.sync.wait": _event_id_errors, "pto.tload": _transfer_errors, "pto.tprefetch": _transfer_errors,
    "pto.tstore": _transfer_errors, "pto.tgetval": _scalar_access_errors, "pto.tsetval": _scalar_access_errors,
    "pto.get_tensor_view_dim": _scalar_access_errors,
}


def _located(e: PtoError, op: A.Op) -> PtoError:
    if e.loc is None:
        e.loc = op.loc
    return e


def _static_type(scope: NameScope, name: str) -> Any:
    """The type ``name`` has where the current op reads it, as the core will hold it: a
    ``memref.alloc``'d local memref is the tile it allocates."""
    t = scope.types.get(name)
    d = scope.defs.get(name)
    if d is not None and d.name == "memref.alloc":
        return memref_alloc_tile_type(t) or t
    return t


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
        for op in walk(fn.body):
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


_INITIALIZE_PIPE = ("pto.aic_initialize_pipe", "pto.aiv_initialize_pipe")
_DIRECTION_BIT = {C2V: 1, V2C: 2}  # dir_mask bits (pto-text-format §4.12)


def _fifo_direction_errors(module: A.Module) -> list[PtoError]:
    """A push, pop or free on a cube<->vector FIFO direction that no aic_/aiv_initialize_pipe of the
    module declares (its ``dir_mask``) can never run: the text alone decides it, so it is refused
    before running rather than faulting at the op (the run still checks that a declaration ran
    before the use, which depends on the order the cores reach them)."""
    declared = 0
    uses: list[tuple[str, A.Op]] = []
    for fn in module.functions:
        for op in walk(fn.body):
            if op.name in _INITIALIZE_PIPE:
                mask = op.attrs.get("dir_mask")
                declared |= mask if isinstance(mask, int) and not isinstance(mask, bool) else 3
            elif op.name.removeprefix("pto.") in SIDE_OF:
                uses.append((SIDE_OF[op.name.removeprefix("pto.")][0], op))
    return [VerifyError(f"{op.name} uses the {direction} FIFO, but no aic_initialize_pipe / aiv_initialize_pipe "
                        f"of the module declares that direction (dir_mask {_DIRECTION_BIT[direction]} or 3; 1 = C2V, "
                        f"2 = V2C)", op.loc)
            for direction, op in uses if not declared & _DIRECTION_BIT[direction]]


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
