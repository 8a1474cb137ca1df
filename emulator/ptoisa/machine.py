"""The machine model: the chip (core kinds, counts, grouping, shared memory), clock, pipes,
on-chip buffers, event ids and every timing number.

Read from ``isa_specs/machines/NAME.yaml`` once, validated, cached. Code holds no machine numbers:
timing formulas in the instruction specs reference ``Machine.params`` by name, and the core's
own costs are in ``Machine.costs`` (keys :data:`COST_KEYS`).

``load_machine("a2a3:cann_platform")`` applies the named set under ``alternatives:`` of the file.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path

from ptoisa.errors import Loc, SpecError
from ptoisa.isa.yamldoc import YMap, check_keys, expect_map, load_yaml, number
from ptoisa.suggest import did_you_mean

TILE_LOCS = ("vec", "mat", "left", "right", "acc", "bias", "scaling")
TILE_LAYOUTS = ("ND", "DN", "NZ", "ZN", "ZZ", "NN")  # pto-text-format.md §5.3
COST_KEYS = ("scalar_issue", "scalar_arith", "set_flag", "wait_flag", "barrier", "barrier_v", "barrier_all")
KNOWN_PIPES = ("S", "MTE1", "MTE2", "MTE3", "V", "M", "FIX")


@dataclass(frozen=True, slots=True)
class Buffer:
    """One on-chip memory: ``loc`` is the tile location name, ``name`` the hardware name."""

    name: str
    loc: str
    size: int
    align: int
    # Tile layouts the buffer may hold (ND, DN, NZ, ZN, ZZ, NN; empty = any) and its fractal box
    # size in bytes: target facts the tile-level verifier and lowering read.
    layouts: tuple[str, ...] = ()
    fractal: int = 512


@dataclass(frozen=True, slots=True)
class CoreKind:
    """One kind of core on the chip: the pipes and the on-chip buffers (tile locs) it has.
    ``hardware`` is false for a kind the real chip lacks (the combined core on A2/A3)."""

    name: str
    pipes: tuple[str, ...]
    buffers: tuple[str, ...]
    hardware: bool = True


@dataclass(frozen=True, slots=True)
class ChipSpec:
    """How many cores of each kind, grouped how, sharing which memory system.

    ``group`` = cores of each hardware kind in one core group (a2a3: 1 AIC + 2 AIV); a combined
    core, when used, stands for a whole group. ``shared`` = the chip-level memory numbers
    (``hbm_bw``, ``l2_bw``, ... in bytes per cycle)."""

    groups: int
    group: dict[str, int]
    kinds: dict[str, CoreKind]
    shared: dict[str, float] = field(default_factory=dict)

    def count(self, kind: str) -> int:
        """Cores of ``kind`` on the chip."""
        if kind not in self.kinds:
            return 0
        per_group = self.group.get(kind, 0)
        return self.groups * (per_group if per_group else 1)


@dataclass(frozen=True, slots=True)
class Machine:
    name: str
    clock_ghz: float
    pipes: tuple[str, ...]
    in_order: dict[str, bool]
    buffers: dict[str, Buffer]
    event_ids: int
    costs: dict[str, float]
    params: dict[str, float]
    file: str
    description: str = ""
    alternatives: dict[str, dict[str, float]] = field(default_factory=dict)
    chip: ChipSpec | None = None  # None: the file describes one combined core (see ``chip_spec``)

    @property
    def arch(self) -> str:
        """The architecture the machine models, the key of an instruction's ``targets`` and
        ``target_dtypes`` (``a2a3`` for ``a2a3`` and its alternatives such as ``a2a3:ascend910b2``)."""
        return self.name.split(":", 1)[0]

    def chip_spec(self) -> ChipSpec:
        """The chip; a file without ``chip:`` describes one combined core with every pipe and buffer."""
        if self.chip is not None:
            return self.chip
        whole = CoreKind("combined", self.pipes, tuple(self.buffers), True)
        return ChipSpec(1, {}, {"combined": whole})

    def with_alternative(self, option: str) -> Machine:
        """A copy with the named ``alternatives:`` set applied."""
        if option not in self.alternatives:
            known = ", ".join(sorted(self.alternatives)) or "none"
            raise SpecError(f"machine '{self.name}' has no alternative '{option}' (known: {known})",
                            Loc(self.file, 0, 0))
        over = self.alternatives[option]
        clock = float(over.get("clock_ghz", self.clock_ghz))
        costs = {k: over.get(k, v) for k, v in self.costs.items()}
        params = {k: over.get(k, v) for k, v in self.params.items()}
        return replace(self, name=f"{self.name}:{option}", clock_ghz=clock, costs=costs, params=params)

    def cycles_to_us(self, cycles: float) -> float:
        return cycles / (self.clock_ghz * 1e3)


_HERE = Path(__file__).resolve().parent  # where this package lives (resolved once: it does not move)


def isa_dir() -> Path:
    """The ``isa_specs`` directory: env ``PYPTOEMU_ISA_DIR``, else the copy shipped inside an
    installed wheel (``ptoisa/isa_specs``, put there by ``setup.py``), else the top-level directory of
    a source checkout or editable install (``emulator/ptoisa`` -> ``isa_specs``)."""
    env = os.environ.get("PYPTOEMU_ISA_DIR")
    if env:
        return Path(env)
    here = _HERE
    shipped = here / "isa_specs"
    if shipped.is_dir():
        return shipped
    return here.parents[1] / "isa_specs"


_TOP_REQUIRED = frozenset({"name", "clock_ghz", "pipes", "buffers", "event_ids", "costs", "params"})
_TOP_OPTIONAL = frozenset({"description", "alternatives", "chip"})
CORE_KINDS = ("aic", "aiv", "combined")


# Parameters that count things (entries of a queue): whole numbers, never rounded.
COUNT_PARAMS = frozenset({"issue_queue_depth"})


def _check_rates(costs: dict, params: dict, what: str, costs_map, params_map) -> None:
    """Every cost and parameter is a finite number >= 0; bandwidths (``bw_*``) are > 0 (a timing
    formula divides by them); counts (:data:`COUNT_PARAMS`) are whole numbers."""
    for group, values, where in (("costs", costs, costs_map), ("params", params, params_map)):
        for key, v in values.items():
            if not math.isfinite(v) or v < 0 or (key.startswith("bw_") and v <= 0):
                need = "a positive number" if key.startswith("bw_") else "a finite number >= 0"
                raise SpecError(f"{what}: {group}.{key} must be {need}, got {v}", where.loc_of(key))
            if key in COUNT_PARAMS and int(v) != v:
                raise SpecError(f"{what}: {group}.{key} must be a whole number, got {v}", where.loc_of(key))


def _parse(path: Path) -> Machine:
    file = str(path)
    doc = expect_map(load_yaml(path), "machine file", Loc(file, 1, 1))
    check_keys(doc, "machine", _TOP_REQUIRED, _TOP_OPTIONAL)
    name = doc["name"]
    if not isinstance(name, str):
        raise SpecError("machine name must be a string", doc.loc_of("name"))
    what = f"machine '{name}'"
    clock = number(doc["clock_ghz"], f"{what}: clock_ghz", doc.loc_of("clock_ghz"))
    if clock <= 0:
        raise SpecError(f"{what}: clock_ghz must be positive", doc.loc_of("clock_ghz"))

    pipes_map = expect_map(doc["pipes"], f"{what}: pipes", doc.loc_of("pipes"))
    in_order: dict[str, bool] = {}
    for pipe, spec in pipes_map.items():
        if pipe not in KNOWN_PIPES:
            raise SpecError(f"{what}: unknown pipe '{pipe}' (known: {', '.join(KNOWN_PIPES)})",
                            pipes_map.loc_of(pipe))
        spec = expect_map(spec, f"{what}: pipe {pipe}", pipes_map.loc_of(pipe))
        check_keys(spec, f"{what}: pipe {pipe}", {"in_order"}, set())
        if not isinstance(spec["in_order"], bool):
            raise SpecError(f"{what}: pipe {pipe}: in_order must be true or false", spec.loc_of("in_order"))
        in_order[pipe] = spec["in_order"]

    buf_map = expect_map(doc["buffers"], f"{what}: buffers", doc.loc_of("buffers"))
    buffers: dict[str, Buffer] = {}
    for loc, spec in buf_map.items():
        if loc not in TILE_LOCS:
            raise SpecError(f"{what}: unknown buffer loc '{loc}' (known: {', '.join(TILE_LOCS)})",
                            buf_map.loc_of(loc))
        bwhat = f"{what}: buffer {loc}"
        spec = expect_map(spec, bwhat, buf_map.loc_of(loc))
        check_keys(spec, bwhat, {"name", "size", "align"}, {"layouts", "fractal"})
        size = number(spec["size"], f"{bwhat}: size", spec.loc_of("size"))
        align = number(spec["align"], f"{bwhat}: align", spec.loc_of("align"))
        fractal = number(spec.get("fractal", 512), f"{bwhat}: fractal", spec.loc)
        if int(size) != size or size <= 0 or int(align) != align or align <= 0 or int(fractal) != fractal:
            raise SpecError(f"{bwhat}: size, align and fractal must be positive integers", spec.loc)
        layouts = spec.get("layouts", [])
        if not isinstance(layouts, list) or any(str(x).upper() not in TILE_LAYOUTS for x in layouts):
            raise SpecError(f"{bwhat}: layouts must be a list of {', '.join(TILE_LAYOUTS)}", spec.loc)
        buffers[loc] = Buffer(str(spec["name"]), loc, int(size), int(align),
                              tuple(str(x).upper() for x in layouts), int(fractal))

    event_ids = number(doc["event_ids"], f"{what}: event_ids", doc.loc_of("event_ids"))
    costs_map = expect_map(doc["costs"], f"{what}: costs", doc.loc_of("costs"))
    check_keys(costs_map, f"{what}: costs", frozenset(COST_KEYS), set())
    costs = {k: number(v, f"{what}: costs.{k}", costs_map.loc_of(k)) for k, v in costs_map.items()}
    params = _numbers(doc["params"], f"{what}: params", doc.loc_of("params"))
    _check_rates(costs, params, what, costs_map, doc["params"])

    alternatives: dict[str, dict[str, float]] = {}
    if "alternatives" in doc:
        alt_map = expect_map(doc["alternatives"], f"{what}: alternatives", doc.loc_of("alternatives"))
        for opt, over in alt_map.items():
            owhat = f"{what}: alternative '{opt}'"
            values = _numbers(over, owhat, alt_map.loc_of(opt))
            for key in values:
                if key != "clock_ghz" and key not in params and key not in costs:
                    raise SpecError(f"{owhat}: unknown key '{key}' (not clock_ghz, a param or a cost)",
                                    over.loc_of(key))
                if key in COUNT_PARAMS and (int(values[key]) != values[key] or values[key] < 0):
                    raise SpecError(f"{owhat}: {key} must be a whole number >= 0, got {values[key]}",
                                    over.loc_of(key))
            alternatives[str(opt)] = values

    chip = _parse_chip(doc["chip"], what, doc.loc_of("chip"), in_order, buffers) if "chip" in doc else None

    return Machine(
        name=name,
        clock_ghz=float(clock),
        pipes=tuple(in_order),
        in_order=in_order,
        buffers=buffers,
        event_ids=int(event_ids),
        costs=costs,
        params=params,
        file=file,
        description=str(doc.get("description", "")),
        alternatives=alternatives,
        chip=chip,
    )


def _parse_chip(value: object, what: str, loc: Loc, pipes: dict, buffers: dict) -> ChipSpec:
    doc = expect_map(value, f"{what}: chip", loc)
    check_keys(doc, f"{what}: chip", {"groups", "group", "core_kinds"}, {"shared"})
    groups = number(doc["groups"], f"{what}: chip.groups", doc.loc_of("groups"))
    if int(groups) != groups or groups < 1:
        raise SpecError(f"{what}: chip.groups must be a positive integer", doc.loc_of("groups"))
    kinds_map = expect_map(doc["core_kinds"], f"{what}: chip.core_kinds", doc.loc_of("core_kinds"))
    kinds: dict[str, CoreKind] = {}
    for kname, spec in kinds_map.items():
        kwhat = f"{what}: core kind {kname}"
        if kname not in CORE_KINDS:
            raise SpecError(f"{what}: unknown core kind '{kname}' (known: {', '.join(CORE_KINDS)})",
                            kinds_map.loc_of(kname))
        spec = expect_map(spec, kwhat, kinds_map.loc_of(kname))
        check_keys(spec, kwhat, {"pipes", "buffers", "hardware"}, set())
        for key, known in (("pipes", pipes), ("buffers", buffers)):
            items = spec[key]
            if not isinstance(items, list) or any(x not in known for x in items):
                raise SpecError(f"{kwhat}: {key} must be a list of {', '.join(known)}", spec.loc_of(key))
        if "S" not in spec["pipes"]:
            raise SpecError(f"{kwhat}: every core has the scalar pipe S", spec.loc_of("pipes"))
        if not isinstance(spec["hardware"], bool):
            raise SpecError(f"{kwhat}: hardware must be true or false", spec.loc_of("hardware"))
        kinds[kname] = CoreKind(kname, tuple(p for p in pipes if p in spec["pipes"]),
                                tuple(b for b in buffers if b in spec["buffers"]), spec["hardware"])
    group_map = expect_map(doc["group"], f"{what}: chip.group", doc.loc_of("group"))
    group: dict[str, int] = {}
    for kname, n in group_map.items():
        if kname not in kinds or kname == "combined":
            raise SpecError(f"{what}: chip.group names '{kname}', which is not a hardware core kind of "
                            f"chip.core_kinds", group_map.loc_of(kname))
        n = number(n, f"{what}: chip.group.{kname}", group_map.loc_of(kname))
        if int(n) != n or n < 1:
            raise SpecError(f"{what}: chip.group.{kname} must be a positive integer", group_map.loc_of(kname))
        group[kname] = int(n)
    shared = _numbers(doc["shared"], f"{what}: chip.shared", doc.loc_of("shared")) if "shared" in doc else {}
    return ChipSpec(int(groups), group, kinds, shared)


def _numbers(value: object, what: str, loc: Loc) -> dict[str, float]:
    m: YMap = expect_map(value, what, loc)
    out: dict[str, float] = {}
    for key, v in m.items():
        if not key.isidentifier():
            raise SpecError(f"{what}: key '{key}' is not a valid identifier", m.loc_of(key))
        out[key] = number(v, f"{what}.{key}", m.loc_of(key))
    return out


@cache
def _load_path(path: str, option: str | None) -> Machine:
    machine = _parse(Path(path))
    return machine.with_alternative(option) if option else machine


def load_machine(name_or_path: str = "a2a3") -> Machine:
    """Load a machine by name (``isa_specs/machines/NAME.yaml``) or by file path.

    ``"NAME:OPTION"`` applies the alternative ``OPTION`` of that machine file.
    """
    option = None
    base = name_or_path
    if ":" in name_or_path and not Path(name_or_path).exists():
        base, option = name_or_path.rsplit(":", 1)
    if base.endswith((".yaml", ".yml")) or os.sep in base or "/" in base:
        path = Path(base)
    else:
        path = isa_dir() / "machines" / f"{base}.yaml"
    if not path.exists():
        names = sorted(q.stem for q in (isa_dir() / "machines").glob("*.yaml"))
        raise SpecError(f"no machine file for '{base}'{did_you_mean(base, names)} (looked for {path}; "
                        f"known machines: {', '.join(names)})")
    return _load_path(str(path.resolve()), option)
