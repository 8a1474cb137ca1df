"""Bind each op once: the op's name picks its lowering, which returns the step the scalar unit runs.

The top of the core's one-way chain: ``scalar`` (the unit that runs steps) <- ``control`` (arith,
scf, func, memref), ``coreops`` (the `pto` ops the core executes itself) and ``tileop`` (tile
instructions with NumPy semantics) <- this module. The scalar unit is handed :func:`bind_op`; it
never imports the lowerings.
"""

from __future__ import annotations

from ptoisa.suggest import did_you_mean
from ptoisa.text import ast as A
from pyptoemu.core.control import LOWERINGS
from pyptoemu.core.coreops import CORE_OPS
from pyptoemu.core.scalar import ScalarUnit, Step, fail_step
from pyptoemu.core.tileop import bind_tile_op
from pyptoemu.errors import UnsupportedOpError, VerifyError
from pyptoemu.isa.semantics import SEMANTICS


def bind_op(su: ScalarUnit, op: A.Op) -> Step:
    """The step of ``op``: arith/scf/func/memref lowerings, else a `pto` op by its ISA spec."""
    lowering = LOWERINGS.get(op.name)
    if lowering is not None:
        return lowering(su, op)
    if op.name.startswith("pto."):
        return _bind_pto(su, op)
    return fail_step(_unsupported(op))


def _bind_pto(su: ScalarUnit, op: A.Op) -> Step:
    """A `pto` op: its spec's semantics key is ``core.NAME`` (executed by the core itself) or a
    NumPy semantics function (a tile instruction issued to a pipe)."""
    spec = su.isa.get(op.name)
    if spec is None:
        hint = did_you_mean(op.name, [f"pto.{m}" for m in su.isa.instructions])
        return fail_step(VerifyError(f"{op.name} is not an op of the PTO dialect{hint} (see `pyptoemu isa list`)",
                                     op.loc))
    if spec.targets and su.machine.arch not in spec.targets:
        return fail_step(VerifyError(f"{op.name} exists only on {' and '.join(spec.targets)}; this kernel runs "
                                     f"on {su.machine.name} (pto.target_arch or --machine chooses)", op.loc))
    if not spec.implemented:
        return fail_step(_unsupported(op))
    for name, a in spec.attrs.items():  # an attribute value the emulator does not model is not ignored
        if a.implemented is None or name not in op.attrs:
            continue
        value = str(getattr(op.attrs[name], "value", op.attrs[name]))
        if value not in a.implemented:
            return fail_step(UnsupportedOpError(f"{op.name} {{{name} = {value}}} is not supported by the emulator yet "
                                                f"(supported: {', '.join(a.implemented)})", op.loc))
    key = spec.semantics
    if key.startswith("core."):
        lowering = CORE_OPS.get(key[5:])
        return lowering(su, op) if lowering is not None else fail_step(_unsupported(op))
    semantics = SEMANTICS.get(key)
    if semantics is None:
        return fail_step(_unsupported(op))
    return bind_tile_op(su, op, spec, semantics)


def _unsupported(op: A.Op) -> UnsupportedOpError:
    return UnsupportedOpError(f"{op.name} is not supported by the emulator yet", op.loc)
