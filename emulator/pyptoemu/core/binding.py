"""Bind each op once: the op's name picks its lowering, which returns the step the scalar unit runs.

The top of the core's one-way chain: ``scalar`` (the unit that runs steps) <- ``control`` (arith,
scf, func, memref), ``coreops`` (the `pto` ops the core executes itself) and ``tileop`` (tile
instructions with NumPy semantics) <- this module. The scalar unit is handed :func:`bind_op`; it
never imports the lowerings.

Which lowering an op takes depends on the op, the ISA and the machine only, never on a run:
:class:`SharedBinds` keeps it (:func:`lowering_of`) for every core and run of a module on one ISA
and machine, so a run looks up one dict per op instead of the name, the spec and its checks.
"""

from __future__ import annotations

from functools import partial

from ptoisa.machine import Machine
from ptoisa.suggest import did_you_mean
from ptoisa.text import ast as A
from pyptoemu.core.control import LOWERINGS, PREPARED_LOWERINGS
from pyptoemu.core.coreops import CORE_OPS, PREPARED_CORE_OPS
from pyptoemu.core.scalar import Lowering, ScalarUnit, Step, fail_step
from pyptoemu.core.tileop import bind_tile_op
from pyptoemu.errors import UnsupportedOpError, VerifyError
from pyptoemu.isa.semantics import SEMANTICS


class SharedBinds:
    """What binding a module's ops finds that holds nothing of a run, shared by the cores of a chip
    and by later runs of the same module on the same ISA and machine (api._Prepared.bindings).

    ``lowerings``: (core kind, op) -> the lowering that binds the op on that kind of core (a
    cube or vector core binds the other side's ops as no-ops; AICore._bind). Finding it costs some
    80 bytecodes per op (name, ISA spec, target, attribute checks): about 0.35 M machine
    instructions per timing-only run of the stream kernel (callgrind), all of it paid again by
    every run before. ``tile_ops``: (core kind, op) -> the tile-op binding template
    (tileop.bind_tile_op)."""

    __slots__ = ("lowerings", "tile_ops")

    def __init__(self) -> None:
        self.lowerings: dict[tuple[str, A.Op], Lowering] = {}
        self.tile_ops: dict = {}


def bind_op(su: ScalarUnit, op: A.Op) -> Step:
    """The step of ``op``: arith/scf/func/memref lowerings, else a `pto` op by its ISA spec."""
    lowering = lowering_of(op, su.isa, su.machine)
    if isinstance(lowering, Exception):
        return fail_step(lowering)
    return lowering(su, op)


def lowering_of(op: A.Op, isa, machine: Machine) -> Lowering | Exception:
    """The lowering that binds ``op`` on ``isa`` and ``machine``, or the error binding it raises
    when it runs (a fresh one each call: an exception raised again would grow its traceback)."""
    prepare = PREPARED_LOWERINGS.get(op.name)
    if prepare is not None:
        return prepare(op, isa, machine)  # (an error it raises is the op's binding error, raised where it runs)
    lowering = LOWERINGS.get(op.name)
    if lowering is not None:
        return lowering
    if op.name.startswith("pto."):
        return _pto_lowering(op, isa, machine)
    return _unsupported(op)


def _pto_lowering(op: A.Op, isa, machine: Machine) -> Lowering | Exception:
    """A `pto` op: its spec's semantics key is ``core.NAME`` (executed by the core itself) or a
    NumPy semantics function (a tile instruction issued to a pipe)."""
    spec = isa.get(op.name)
    if spec is None:
        hint = did_you_mean(op.name, [f"pto.{m}" for m in isa.instructions])
        return VerifyError(f"{op.name} is not an op of the PTO dialect{hint} (see `pyptoemu isa list`)", op.loc)
    if spec.targets and machine.arch not in spec.targets:
        return VerifyError(f"{op.name} exists only on {' and '.join(spec.targets)}; this kernel runs "
                           f"on {machine.name} (pto.target_arch or --machine chooses)", op.loc)
    if not spec.implemented:
        return _unsupported(op)
    for name, a in spec.attrs.items():  # an attribute value the emulator does not model is not ignored
        if a.implemented is None or name not in op.attrs:
            continue
        value = str(getattr(op.attrs[name], "value", op.attrs[name]))
        if value not in a.implemented:
            return UnsupportedOpError(f"{op.name} {{{name} = {value}}} is not supported by the emulator yet "
                                      f"(supported: {', '.join(a.implemented)})", op.loc)
    key = spec.semantics
    if key.startswith("core."):
        prepare = PREPARED_CORE_OPS.get(key[5:])
        if prepare is not None:
            return prepare(op, isa, machine)
        lowering = CORE_OPS.get(key[5:])
        return lowering if lowering is not None else _unsupported(op)
    semantics = SEMANTICS.get(key)
    if semantics is None:
        return _unsupported(op)
    return partial(bind_tile_op, spec=spec, semantics=semantics)


def _unsupported(op: A.Op) -> UnsupportedOpError:
    return UnsupportedOpError(f"{op.name} is not supported by the emulator yet", op.loc)
