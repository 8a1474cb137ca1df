"""Load and validate ``isa_specs/instructions/*.yaml`` into an :class:`ISA`.

File shape::

    family: elementwise            # optional, defaults to the file stem
    description: ...               # optional
    templates: {...}               # optional: anchors to reuse (`<<: *vec_binary`), not read otherwise
    attr_kinds:                    # optional: enum kinds an entry's attrs may name as their type (§2.9),
      round_mode: [NONE, RINT, ...]  #   each defined once across the files
    instructions:
      - mnemonic: tadd
        description: ...
        ins: [{name: a, kind: tile, locs: [vec]}, ...]
        outs: [...]
        dtypes: [f32, f16, ...]
        pipe: V                    # or none, or {by: src_dst|src|dst, map: {...}, default: P}
        domain: dst                # dst | src | none
        timing: {occupancy: "...", latency: "...", params: {head: v_add_head}}
                                   # or {by: dst, map: {vec: {occupancy, latency}, ...}, default: {...}}
        semantics: binary_add      # a registered key or core.*; optional when implemented is false
        implemented: true
        attrs: {rmode: {type: round_mode, default: CAST_RINT}}   # optional
        constraints: [same_dtype]  # optional: checks the core makes on the operands
        target_constraints: {a2a3: [same_shape]}     # optional: more checks on some architectures only
        target_pipes: {a5: [FIX, MTE3]}               # optional: the pipes an op that names its pipe
                                                      #   (sync.set <PIPE_X>) may name there
        targets: [a5]              # optional: the machine architectures that have the op
        target_dtypes: {a2a3: [i16, f32]}            # optional: a narrower dtype list per architecture
        target_conversions: {a2a3: {f32: [f16]}}     # optional: a narrower conversions table
        dtype_tuples: {operands: [a, b, c], legal: [[f16, f16, f32], ...]}  # optional: legal dtype combinations
        # a pipe map may say which of its keys exist on some architectures only:
        #   pipe: {by: src_dst, map: {...}, only_on: {vec->mat: [a5]}}

Every problem raises :class:`SpecError` naming the file, the entry and the line.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from ptoisa.dtypes import is_known
from ptoisa.errors import Loc, SpecError
from ptoisa.isa.spec import (
    FORMULA_FUNCS,
    FORMULA_VARS,
    GROUP_STYLES,
    ISA,
    OPERAND_ROLES,
    PLAIN_SYNTAX,
    RULE_KINDS,
    SYNTAX_FORMS,
    AttrSpec,
    DtypeTuples,
    Formula,
    InstrSpec,
    OperandSpec,
    PipeRule,
    SyntaxForm,
    Timing,
    TimingCase,
)
from ptoisa.isa.yamldoc import YMap, YSeq, check_keys, expect_map, load_yaml
from ptoisa.machine import TILE_LOCS, Machine, isa_dir, load_machine

OPERAND_KINDS = ("tile", "view", "scalar", "index", "handle")
DOMAINS = ("dst", "src", "none")
OPERAND_LOCS = (*TILE_LOCS, "gm")

_FILE_REQUIRED = frozenset({"instructions"})
_FILE_OPTIONAL = frozenset({"family", "description", "templates", "attr_kinds"})
# attribute types that are not enum kinds: the value is a plain literal of that type
_ATTR_LITERAL_TYPES = frozenset({"bool", "i32"})
_ENTRY_REQUIRED = frozenset(
    {"mnemonic", "description", "ins", "outs", "dtypes", "pipe", "domain", "timing", "implemented"}
)
_ENTRY_OPTIONAL = frozenset({"semantics", "attrs", "notes", "constraints", "cpp", "conversions", "syntax",
                             "targets", "target_dtypes", "target_conversions", "target_constraints",
                             "target_pipes", "dtype_tuples"})
# Operand constraints the core checks before running an instruction (pto-text-format §4.0).
CONSTRAINTS = frozenset({
    "same_dtype",  # every tile operand except scratch (tmp) has one element type
    "i32_compare_eq_only",  # on machines with params.cmp_i32_eq_only, i32 compares must be eq
    "same_valid",  # every data tile's valid region equals dst's (§4.3 iteration domain; known ones)
    "one_src_matches_dst",  # at least one source's valid region equals dst's (§4.3 tpart*, "A3"; known ones)
    "nd_tiles",  # every tile operand is ND: blayout=row_major, slayout=none_box (§4.3)
    "nd_src",  # the (first) source tile is ND (§4.6 row reductions)
    "rows_match",  # the source's valid rows equal dst's (§4.6 row reductions, §4.7 trowexpand; known ones)
    "cols_match",  # the source's valid cols equal dst's (§4.6 column reductions, §4.7 tcolexpand)
    "sources_rows_match",  # every source has a row per valid row of dst (§4.7 trowexpand<op>: both operands)
    "sources_cols_match",  # every source has a column per valid column of dst (§4.7 tcolexpand<op>: b[0,j])
    "same_shape",  # the source's static rows/cols equal dst's (§4.2 tfillpad, §4.9 tcvt)
    "dst_covers_src",  # dst's static rows/cols are at least the source's (§4.2 tfillpad_expand)
    "pad_dst",  # dst's pad is not 0 (§4.2, §5.5 tfillpad*)
    "one_row_dst",  # dst has one row (§4.6 column reductions, §4.11 tci)
    "row_major_dst",  # dst is row-major (§4.7 trowexpand<op>)
    "same_esize",  # source and destination elements have one size (§4.2 tload)
    "one_scalar",  # exactly one of the first two ins is a scalar, the other a tile (§4.4 tdivs)
    "relu_needs_acc",  # a reluPreMode other than no_relu needs an acc source (§4.2 tstore)
    "store_keeps_esize",  # a store from vec/mat (not acc) writes GM elements of the tile's size (§4.2 tstore)
    "copy_keeps_dtype",  # a move not out of acc (fixpipe) nor into bias keeps the element type (§4.2 tmov)
    "concat_fits_dst",  # dst has the sources' valid columns together (§4.11 tconcat)
    "whole_blocks_without_scratch",  # without the scratch operand src.VC % 32 == 0 (§4.11 tsort32)
    "needs_scratch",  # the optional scratch (tmp) operand must be written (§4.0: "required by some targets")
    "distinct_src_dst",  # dst shares no storage with a data source (§4.5 trecip: "A3 forbids src == dst storage")
})

_ALLOWED_NODES = (
    ast.Expression, ast.BinOp, ast.UnaryOp, ast.Call, ast.Name, ast.Load, ast.Constant,
    ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.USub, ast.UAdd,
    ast.IfExp, ast.Compare, ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE,
)


class _Ctx:
    """Where we are, for messages: file and entry name."""

    def __init__(self, file: str, entry: str):
        self.file = file
        self.entry = entry

    def err(self, message: str, loc: Loc) -> SpecError:
        return SpecError(f"{Path(self.file).name}: entry '{self.entry}': {message}", loc)


# ------------------------------------------------------------------------------------------ formulas


def compile_formula(text: Any, names: set[str], consts: dict[str, Any], ctx: _Ctx, loc: Loc,
                    what: str) -> Formula:
    """Parse ``text`` once, check it against the whitelist and ``names``, compile it."""
    if isinstance(text, bool) or not isinstance(text, (str, int, float)):
        raise ctx.err(f"{what}: formula must be a string or a number, got {text!r}", loc)
    src = str(text)
    try:
        facts = _formula_facts(src)
    except SyntaxError as exc:
        raise ctx.err(f"{what}: malformed formula '{src}': {exc.msg}", loc) from None
    for kind, value in facts:
        if kind == _NOT_ALLOWED:
            raise ctx.err(f"{what}: malformed formula '{src}': {value} is not allowed "
                          "(use numbers, variables, + - * / // % **, comparisons, "
                          "a if c else b, ceil floor min max)", loc)
        if kind == _BAD_CONSTANT:
            raise ctx.err(f"{what}: malformed formula '{src}': only numeric constants", loc)
        if kind == _BAD_CALL:
            raise ctx.err(f"{what}: malformed formula '{src}': only calls of "
                          f"{', '.join(FORMULA_FUNCS)} are allowed", loc)
        if value not in names:  # _NAME: a variable
            raise ctx.err(f"{what}: unknown variable '{value}' in '{src}' (core variables: "
                          f"{', '.join(FORMULA_VARS)}; or a machine/entry param)", loc)
    code = _CODES.get((src, what))
    if code is None:
        code = _CODES[(src, what)] = compile(ast.parse(src, mode="eval"), f"<{what}>", "eval")
    return Formula(src, code, consts)


# What compile_formula checks of a formula, in the order it checks it: the nodes of its tree in
# ast.walk order, up to the first one that is wrong whatever the names are. The spec files repeat
# their formulas (709 formulas, 114 texts): each text is parsed and walked once per process, and
# compiled once per (text, what); only the variables are checked per use (their names differ).
_NOT_ALLOWED, _BAD_CONSTANT, _BAD_CALL, _NAME = range(4)
_FACTS: dict[str, tuple[tuple[int, str | None], ...]] = {}
_CODES: dict[tuple[str, str], Any] = {}


def _formula_facts(src: str) -> tuple[tuple[int, str | None], ...]:
    """Raises SyntaxError for a text that is no Python expression (not remembered)."""
    facts = _FACTS.get(src)
    if facts is not None:
        return facts
    out: list[tuple[int, str | None]] = []
    for node in ast.walk(ast.parse(src, mode="eval")):
        if not isinstance(node, _ALLOWED_NODES):
            out.append((_NOT_ALLOWED, type(node).__name__))
            break
        if isinstance(node, ast.Constant) and (isinstance(node.value, bool)
                                               or not isinstance(node.value, (int, float))):
            out.append((_BAD_CONSTANT, None))
            break
        if isinstance(node, ast.Call) and (not isinstance(node.func, ast.Name)
                                           or node.func.id not in FORMULA_FUNCS or node.keywords):
            out.append((_BAD_CALL, None))
            break
        if isinstance(node, ast.Name) and node.id not in FORMULA_FUNCS:
            out.append((_NAME, node.id))
    facts = _FACTS[src] = tuple(out)
    return facts


def _case(m: YMap, ctx: _Ctx, machine: Machine, what: str) -> TimingCase:
    check_keys(m, f"{ctx.file}: entry '{ctx.entry}': {what}", {"occupancy", "latency"},
               {"params", "traffic", "bandwidth"})
    params: dict[str, float] = {}
    if "params" in m:
        pmap = expect_map(m["params"], f"{what}.params", m.loc_of("params"))
        for key, value in pmap.items():
            if not key.isidentifier() or key in FORMULA_VARS or key in FORMULA_FUNCS:
                raise ctx.err(f"{what}.params: '{key}' is not a usable parameter name", pmap.loc_of(key))
            f = compile_formula(value, set(machine.params), {"__builtins__": {}, **FORMULA_FUNCS},
                                ctx, pmap.loc_of(key), f"{what}.params.{key}")
            params[key] = f(dict(machine.params))
    names = set(FORMULA_VARS) | set(machine.params) | set(params)
    consts = {"__builtins__": {}, **FORMULA_FUNCS, **machine.params, **params}
    occ = compile_formula(m["occupancy"], names, consts, ctx, m.loc_of("occupancy"), f"{what}.occupancy")
    lat = compile_formula(m["latency"], names, consts, ctx, m.loc_of("latency"), f"{what}.latency")
    if ("traffic" in m) != ("bandwidth" in m):
        raise ctx.err(f"{what}: traffic and bandwidth go together (a DMA's bytes and its peak rate)", m.loc)
    traffic = bandwidth = None
    if "traffic" in m:
        traffic = compile_formula(m["traffic"], names, consts, ctx, m.loc_of("traffic"), f"{what}.traffic")
        bandwidth = compile_formula(m["bandwidth"], names, consts, ctx, m.loc_of("bandwidth"), f"{what}.bandwidth")
    return TimingCase(occ, lat, params, traffic, bandwidth)


def _timing(value: Any, ctx: _Ctx, machine: Machine, loc: Loc) -> Timing:
    m = _map(value, ctx, "timing", loc)
    if "by" not in m:
        return Timing(case=_case(m, ctx, machine, "timing"))
    check_keys(m, f"{ctx.file}: entry '{ctx.entry}': timing", {"by", "map"}, {"default"})
    by = _rule_kind(m, ctx)
    table = _map(m["map"], ctx, "timing.map", m.loc_of("map"))
    cases = {str(k): _case(_map(v, ctx, f"timing.map.{k}", table.loc_of(k)), ctx, machine, f"timing.map.{k}")
             for k, v in table.items()}
    default = None
    if "default" in m:
        default = _case(_map(m["default"], ctx, "timing.default", m.loc_of("default")), ctx, machine,
                        "timing.default")
    return Timing(by=by, cases=cases, default=default)


# ------------------------------------------------------------------------------------------- pieces


def _map(value: Any, ctx: _Ctx, what: str, loc: Loc) -> YMap:
    if not isinstance(value, YMap):
        raise ctx.err(f"{what} must be a mapping", getattr(value, "loc", loc))
    return value


def _seq(value: Any, ctx: _Ctx, what: str, loc: Loc) -> YSeq:
    if not isinstance(value, YSeq):
        raise ctx.err(f"{what} must be a list", getattr(value, "loc", loc))
    return value


def _rule_kind(m: YMap, ctx: _Ctx) -> str:
    by = m["by"]
    if by not in RULE_KINDS:
        raise ctx.err(f"'by' must be one of {', '.join(RULE_KINDS)}, got {by!r}", m.loc_of("by"))
    return str(by)


def _pipe_name(value: Any, ctx: _Ctx, machine: Machine, loc: Loc) -> str:
    if value not in machine.pipes and value != "none":
        raise ctx.err(f"unknown pipe {value!r} (machine '{machine.name}' has: "
                      f"{', '.join(machine.pipes)}; or none)", loc)
    return str(value)


def _pipe(value: Any, ctx: _Ctx, machine: Machine, loc: Loc) -> PipeRule:
    if not isinstance(value, YMap):
        return PipeRule(fixed=_pipe_name(value, ctx, machine, loc))
    check_keys(value, f"{ctx.file}: entry '{ctx.entry}': pipe", {"by", "map"}, {"default", "only_on"})
    by = _rule_kind(value, ctx)
    table = _map(value["map"], ctx, "pipe.map", value.loc_of("map"))
    rmap = {str(k): _pipe_name(v, ctx, machine, table.loc_of(k)) for k, v in table.items()}
    default = None
    if "default" in value:
        default = _pipe_name(value["default"], ctx, machine, value.loc_of("default"))
    return PipeRule(by=by, map=rmap, default=default, elsewhere=_only_on(value, ctx, rmap, machine.arch))


def _only_on(value: YMap, ctx: _Ctx, rmap: dict[str, str], arch: str) -> dict[str, tuple[str, ...]]:
    """``only_on: {vec->mat: [a5]}``: map keys that exist on the listed architectures only; the
    ones this machine's ``arch`` lacks, with where they exist."""
    if "only_on" not in value:
        return {}
    table = _map(value["only_on"], ctx, "pipe.only_on", value.loc_of("only_on"))
    out: dict[str, tuple[str, ...]] = {}
    for key, arches in table.items():
        if key not in rmap:
            raise ctx.err(f"pipe.only_on: {key!r} is not a key of pipe.map", table.loc_of(key))
        names = _targets(arches, ctx, table.loc_of(key))
        if arch not in names:
            out[str(key)] = names
    return out


def _operands(value: Any, ctx: _Ctx, what: str, loc: Loc) -> tuple[OperandSpec, ...]:
    seq = _seq(value, ctx, what, loc)
    out: list[OperandSpec] = []
    for item, iloc in zip(seq, seq.item_locs, strict=False):
        m = _map(item, ctx, f"{what} item", iloc)
        check_keys(m, f"{ctx.file}: entry '{ctx.entry}': {what} operand", {"name", "kind"},
                   {"locs", "optional", "role", "dtypes"})
        kinds = m["kind"] if isinstance(m["kind"], list) else [m["kind"]]
        for k in kinds:
            if k not in OPERAND_KINDS:
                raise ctx.err(f"{what} '{m['name']}': unknown kind {k!r} (known: {', '.join(OPERAND_KINDS)})",
                              m.loc_of("kind"))
        locs = None
        if "locs" in m:
            locs_seq = _seq(m["locs"], ctx, f"{what} '{m['name']}' locs", m.loc_of("locs"))
            for lc in locs_seq:
                if lc not in OPERAND_LOCS:
                    raise ctx.err(f"{what} '{m['name']}': unknown loc {lc!r} (known: {', '.join(OPERAND_LOCS)})",
                                  m.loc_of("locs"))
            locs = tuple(str(x) for x in locs_seq)
        optional = m.get("optional", False)
        if not isinstance(optional, bool):
            raise ctx.err(f"{what} '{m['name']}': optional must be true or false", m.loc_of("optional"))
        role = m.get("role", "data")
        if role not in OPERAND_ROLES:
            raise ctx.err(f"{what} '{m['name']}': role must be one of {', '.join(OPERAND_ROLES)}", m.loc_of("role"))
        dtypes = _dtype_list(m["dtypes"], ctx, f"{what} '{m['name']}' dtypes", m.loc_of("dtypes")) \
            if "dtypes" in m else None
        out.append(OperandSpec(str(m["name"]), tuple(str(k) for k in kinds), locs, optional, str(role), dtypes))
    return tuple(out)


def _dtype_list(value: Any, ctx: _Ctx, what: str, loc: Loc) -> tuple[str, ...]:
    seq = _seq(value, ctx, what, loc)
    for dt in seq:
        if not isinstance(dt, str) or not is_known(dt):
            raise ctx.err(f"{what}: unknown dtype {dt!r}", loc)
    return tuple(str(d) for d in seq)


def _conversions(value: Any, ctx: _Ctx, loc: Loc) -> dict[str, tuple[str, ...]]:
    """``conversions: {f32: [f16, bf16], ...}``: for each source dtype the destination dtypes."""
    m = _map(value, ctx, "conversions", loc)
    out: dict[str, tuple[str, ...]] = {}
    for src, dsts in m.items():
        if not isinstance(src, str) or not is_known(src):
            raise ctx.err(f"conversions: unknown source dtype {src!r}", m.loc_of(src))
        out[src] = _dtype_list(dsts, ctx, f"conversions.{src}", m.loc_of(src))
    return out


def _targets(value: Any, ctx: _Ctx, loc: Loc) -> tuple[str, ...]:
    """``targets: [a5]``: the architectures (machine ``arch``) that have the op; absent = all."""
    names = _seq(value, ctx, "targets", loc)
    if not names or not all(isinstance(n, str) and n.isidentifier() for n in names):
        raise ctx.err("targets must be a non-empty list of machine names such as a5", loc)
    return tuple(str(n) for n in names)


def _narrowed_dtypes(m: YMap, ctx: _Ctx, dtypes: tuple[str, ...], arch: str) -> tuple[str, ...]:
    """The entry's dtypes on ``arch``: ``target_dtypes: {a2a3: [...]}`` narrows the union the spec
    lists (pto-text-format §4.0: "dtype lists are the union over targets unless marked")."""
    if "target_dtypes" not in m:
        return dtypes
    per_arch = _map(m["target_dtypes"], ctx, "target_dtypes", m.loc_of("target_dtypes"))
    narrowed = dtypes
    for name, seq in per_arch.items():
        listed = _dtype_list(seq, ctx, f"target_dtypes.{name}", per_arch.loc_of(name))
        extra = [d for d in listed if d not in dtypes]
        if extra:
            raise ctx.err(f"target_dtypes.{name}: {', '.join(extra)} not in the entry's dtypes",
                          per_arch.loc_of(name))
        if name == arch:
            narrowed = listed
    return narrowed


def _narrowed_conversions(m: YMap, ctx: _Ctx, conversions: dict, arch: str) -> dict[str, tuple[str, ...]]:
    """The entry's conversions on ``arch``: ``target_conversions: {a2a3: {f32: [...], ...}}``
    replaces the union for that architecture; every pair it lists must be in ``conversions``."""
    if "target_conversions" not in m:
        return conversions
    per_arch = _map(m["target_conversions"], ctx, "target_conversions", m.loc_of("target_conversions"))
    narrowed = conversions
    for name, table in per_arch.items():
        listed = _conversions(table, ctx, per_arch.loc_of(name))
        extra = [f"{s}->{d}" for s, ds in listed.items() for d in ds if d not in conversions.get(s, ())]
        if extra:
            raise ctx.err(f"target_conversions.{name}: {', '.join(extra)} not in the entry's conversions",
                          per_arch.loc_of(name))
        if name == arch:
            narrowed = listed
    return narrowed


def _syntax(value: Any, ctx: _Ctx, loc: Loc) -> SyntaxForm:
    """``syntax: {form, attrs_in_ins, attr_dict: first|last, operand_types: each|list,
    indexed: {base, count}, groups: spaced|comma|bare}`` (see :class:`SyntaxForm`)."""
    m = _map(value, ctx, "syntax", loc)
    check_keys(m, f"{ctx.file}: entry '{ctx.entry}': syntax", set(),
               {"form", "attrs_in_ins", "attr_dict", "operand_types", "indexed", "groups", "scratch_last"})
    choices = {"form": SYNTAX_FORMS, "attr_dict": ("first", "last"), "operand_types": ("each", "list"),
               "groups": GROUP_STYLES}
    for key, allowed in choices.items():
        if key in m and m[key] not in allowed:
            raise ctx.err(f"syntax.{key} must be one of {', '.join(allowed)}", m.loc_of(key))
    for flag in ("attrs_in_ins", "scratch_last"):
        if flag in m and not isinstance(m[flag], bool):
            raise ctx.err(f"syntax.{flag} must be true or false", m.loc_of(flag))
    indexed = None
    if "indexed" in m:
        ix = _map(m["indexed"], ctx, "syntax.indexed", m.loc_of("indexed"))
        check_keys(ix, f"{ctx.file}: entry '{ctx.entry}': syntax.indexed", {"base"}, {"count"})
        count = ix.get("count")
        if not isinstance(ix["base"], int) or not (count is None or isinstance(count, int)):
            raise ctx.err("syntax.indexed: base must be an integer and count an integer or null", m.loc_of("indexed"))
        indexed = (ix["base"], count)
    return SyntaxForm(
        form=str(m.get("form", PLAIN_SYNTAX.form)),
        attrs_in_ins=bool(m.get("attrs_in_ins", False)),
        scratch_last=bool(m.get("scratch_last", False)),
        attr_dict_first=m.get("attr_dict", "last") == "first",
        operand_types=str(m.get("operand_types", PLAIN_SYNTAX.operand_types)),
        indexed=indexed,
        groups=str(m.get("groups", PLAIN_SYNTAX.groups)),
    )


def cpp_spelling(mnemonic: str) -> str:
    """The pto-isa C++ intrinsic of an op without a ``cpp`` key: upper case, ``.`` -> ``_``
    (``tmatmul.acc`` -> ``TMATMUL_ACC``)."""
    return mnemonic.upper().replace(".", "_")


def _attrs(value: Any, ctx: _Ctx, loc: Loc) -> dict[str, AttrSpec]:
    m = _map(value, ctx, "attrs", loc)
    out: dict[str, AttrSpec] = {}
    for name, spec in m.items():
        if isinstance(spec, YMap):
            check_keys(spec, f"{ctx.file}: entry '{ctx.entry}': attrs.{name}", {"type"}, {"default", "implemented"})
            done = spec.get("implemented")
            if done is not None and not isinstance(done, list):
                raise ctx.err(f"attrs.{name}.implemented must be a list of values", m.loc_of(name))
            out[name] = AttrSpec(name, str(spec["type"]), spec.get("default"),
                                 tuple(str(v) for v in done) if done is not None else None)
        elif isinstance(spec, str):
            out[name] = AttrSpec(name, spec, None)
        else:
            raise ctx.err(f"attrs.{name} must be a type name or {{type, default}}", m.loc_of(name))
    return out


def _check_entry_keys(m: YMap, ctx: _Ctx) -> None:
    """Every key of an entry is known and every required key is there."""
    for key in m:
        if key not in _ENTRY_REQUIRED and key not in _ENTRY_OPTIONAL:
            allowed = ", ".join(sorted(_ENTRY_REQUIRED | _ENTRY_OPTIONAL))
            raise ctx.err(f"unknown key '{key}' (allowed: {allowed})", m.loc_of(key))
    for key in sorted(_ENTRY_REQUIRED):
        if key not in m:
            raise ctx.err(f"missing field '{key}'", m.loc)


def _entry(m: YMap, family: str, file: str, machine: Machine) -> InstrSpec:
    mnemonic = m.get("mnemonic")
    ctx = _Ctx(file, str(mnemonic) if mnemonic is not None else f"#{m.loc.line}")
    _check_entry_keys(m, ctx)
    if not isinstance(mnemonic, str) or not mnemonic or mnemonic.startswith("pto.") or mnemonic != mnemonic.lower():
        raise ctx.err("mnemonic must be a lower-case name without 'pto.'", m.loc_of("mnemonic"))
    if not isinstance(m["description"], str):
        raise ctx.err("description must be a string", m.loc_of("description"))
    implemented = m["implemented"]
    if not isinstance(implemented, bool):
        raise ctx.err("implemented must be true or false", m.loc_of("implemented"))

    dtypes_seq = _seq(m["dtypes"], ctx, "dtypes", m.loc_of("dtypes"))
    for dt in dtypes_seq:
        if not isinstance(dt, str) or not is_known(dt):
            raise ctx.err(f"unknown dtype {dt!r}", m.loc_of("dtypes"))
    cpp = m.get("cpp", cpp_spelling(mnemonic))
    if not isinstance(cpp, str) or not cpp.isidentifier():
        raise ctx.err("cpp must be a C++ identifier", m.loc_of("cpp"))

    domain = m["domain"]
    if domain not in DOMAINS:
        raise ctx.err(f"domain must be one of {', '.join(DOMAINS)}, got {domain!r}", m.loc_of("domain"))

    semantics = m.get("semantics")
    if semantics is not None:
        if not isinstance(semantics, str):
            raise ctx.err("semantics must be a string key", m.loc_of("semantics"))
    elif implemented:
        raise ctx.err("missing field 'semantics' (required when implemented: true)", m.loc)

    constraints = _constraint_list(m["constraints"], ctx, "constraints", m.loc_of("constraints")) \
        if "constraints" in m else ()
    on_target = _target_constraints(m, ctx, constraints, machine.arch)

    dtypes = tuple(str(d) for d in dtypes_seq)
    conversions = _conversions(m["conversions"], ctx, m.loc_of("conversions")) if "conversions" in m else {}
    return InstrSpec(
        constraints=constraints + on_target,
        target_constraints=on_target,
        mnemonic=mnemonic,
        family=family,
        file=file,
        description=" ".join(m["description"].split()),
        ins=_operands(m["ins"], ctx, "ins", m.loc_of("ins")),
        outs=_operands(m["outs"], ctx, "outs", m.loc_of("outs")),
        dtypes=_narrowed_dtypes(m, ctx, dtypes, machine.arch),
        pipe=_pipe(m["pipe"], ctx, machine, m.loc_of("pipe")),
        domain=str(domain),
        timing=_timing(m["timing"], ctx, machine, m.loc_of("timing")),
        semantics=semantics,
        semantics_loc=m.loc_of("semantics") if semantics is not None else None,
        implemented=implemented,
        attrs=_attrs(m["attrs"], ctx, m.loc_of("attrs")) if "attrs" in m else {},
        line=m.loc.line,
        cpp=cpp,
        conversions=_narrowed_conversions(m, ctx, conversions, machine.arch),
        targets=_targets(m["targets"], ctx, m.loc_of("targets")) if "targets" in m else (),
        named_pipes=_target_pipes(m, ctx, machine),
        syntax=_syntax(m["syntax"], ctx, m.loc_of("syntax")) if "syntax" in m else PLAIN_SYNTAX,
        dtype_tuples=_dtype_tuples(m, ctx) if "dtype_tuples" in m else None,
    )


def _constraint_list(value: Any, ctx: _Ctx, what: str, loc: Loc) -> tuple[str, ...]:
    """A list of names from :data:`CONSTRAINTS`, each once."""
    names = _seq(value, ctx, what, loc)
    for c in names:
        if not isinstance(c, str) or c not in CONSTRAINTS:
            raise ctx.err(f"{what}: unknown constraint {c!r} (known: {', '.join(sorted(CONSTRAINTS))})", loc)
    if len(set(names)) != len(names):
        raise ctx.err(f"{what}: a constraint is listed twice", loc)
    return tuple(str(c) for c in names)


def _target_constraints(m: YMap, ctx: _Ctx, common: tuple[str, ...], arch: str) -> tuple[str, ...]:
    """The constraints ``target_constraints: {a2a3: [same_shape]}`` adds on ``arch`` to the
    entry's ``constraints`` (a rule the spec marks for some targets only, e.g. tmov's equal static
    shapes "(A3)", pto-text-format §4.2). Every architecture's list is validated, whichever machine
    is loaded; a constraint the entry already has for every target is an error (it says nothing)."""
    if "target_constraints" not in m:
        return ()
    per_arch = _map(m["target_constraints"], ctx, "target_constraints", m.loc_of("target_constraints"))
    if not per_arch:
        raise ctx.err("target_constraints must map a machine architecture (such as a2a3) to constraints",
                      m.loc_of("target_constraints"))
    added: tuple[str, ...] = ()
    for name, seq in per_arch.items():
        if not isinstance(name, str) or not name.isidentifier():
            raise ctx.err(f"target_constraints: {name!r} is not a machine architecture (such as a2a3 or a5)",
                          per_arch.loc_of(name))
        listed = _constraint_list(seq, ctx, f"target_constraints.{name}", per_arch.loc_of(name))
        both = [c for c in listed if c in common]
        if both:
            raise ctx.err(f"target_constraints.{name}: {', '.join(both)} is already in the entry's constraints "
                          f"(for every target)", per_arch.loc_of(name))
        if name == arch:
            added = listed
    return added


def _target_pipes(m: YMap, ctx: _Ctx, machine: Machine) -> tuple[str, ...]:
    """``target_pipes: {a5: [FIX, MTE3]}``: the pipes an op that names its pipe in the text
    (``sync.set <PIPE_FIX>, 0``) may name on the loaded machine's architecture; () = any pipe the
    core has. Every architecture's list is validated (pipe names as in the machine files)."""
    if "target_pipes" not in m:
        return ()
    loc = m.loc_of("target_pipes")
    per_arch = _map(m["target_pipes"], ctx, "target_pipes", loc)
    if not per_arch:
        raise ctx.err("target_pipes must map a machine architecture (such as a5) to pipes", loc)
    named: tuple[str, ...] = ()
    for name, seq in per_arch.items():
        if not isinstance(name, str) or not name.isidentifier():
            raise ctx.err(f"target_pipes: {name!r} is not a machine architecture (such as a2a3 or a5)",
                          per_arch.loc_of(name))
        pipes = _seq(seq, ctx, f"target_pipes.{name}", per_arch.loc_of(name))
        if not pipes or len(set(pipes)) != len(pipes):
            raise ctx.err(f"target_pipes.{name}: a non-empty list of distinct pipes", per_arch.loc_of(name))
        listed = tuple(_pipe_name(p, ctx, machine, per_arch.loc_of(name)) for p in pipes)
        if "none" in listed:
            raise ctx.err(f"target_pipes.{name}: 'none' is not a pipe", per_arch.loc_of(name))
        if name == machine.arch:
            named = listed
    return named


def _dtype_tuples(m: YMap, ctx: _Ctx) -> DtypeTuples:
    """``dtype_tuples``: operand names of the entry's ins/outs and the legal dtype rows, one per name."""
    loc = m.loc_of("dtype_tuples")
    spec = _map(m["dtype_tuples"], ctx, "dtype_tuples", loc)
    check_keys(spec, f"{ctx.file}: entry '{ctx.entry}': dtype_tuples", {"operands", "legal"}, set())
    names = tuple(str(n) for n in _seq(spec["operands"], ctx, "dtype_tuples.operands", spec.loc_of("operands")))
    declared = {str(o["name"]) for key in ("ins", "outs") for o in m[key] if isinstance(o, dict) and "name" in o}
    unknown = [n for n in names if n not in declared]
    if unknown or len(set(names)) != len(names):
        raise ctx.err(f"dtype_tuples.operands: {', '.join(unknown) or 'a repeated name'} "
                      f"(operands of this entry: {', '.join(sorted(declared))})", spec.loc_of("operands"))
    rows = []
    for row in _seq(spec["legal"], ctx, "dtype_tuples.legal", spec.loc_of("legal")):
        dts = _dtype_list(row, ctx, "dtype_tuples.legal", spec.loc_of("legal"))
        if len(dts) != len(names):
            raise ctx.err(f"dtype_tuples.legal: {list(dts)} has {len(dts)} dtypes for {len(names)} operands",
                          spec.loc_of("legal"))
        rows.append(tuple(dts))
    return DtypeTuples(names, tuple(rows))


def load_file(path: Path, machine: Machine) -> tuple[list[InstrSpec], dict[str, tuple[str, ...]]]:
    """Load one family file: its entries and the attribute kinds it defines."""
    file = str(path)
    doc = expect_map(load_yaml(path), "instruction file", Loc(file, 1, 1))
    check_keys(doc, f"{path.name}", _FILE_REQUIRED, _FILE_OPTIONAL)
    family = str(doc.get("family", path.stem))
    entries = doc["instructions"]
    if not isinstance(entries, YSeq):
        raise SpecError(f"{path.name}: 'instructions' must be a list", doc.loc_of("instructions"))
    out = []
    for item, loc in zip(entries, entries.item_locs, strict=False):
        if not isinstance(item, YMap):
            raise SpecError(f"{path.name}: each instruction must be a mapping", loc)
        out.append(_entry(item, family, file, machine))
    kinds = _attr_kinds(doc["attr_kinds"], path, doc.loc_of("attr_kinds")) if "attr_kinds" in doc else {}
    return out, kinds


def _attr_kinds(value: Any, path: Path, loc: Loc) -> dict[str, tuple[str, ...]]:
    """``attr_kinds``: kind name -> its values, each a name (YAML reads a bare ``ON``/``OFF`` as a
    boolean: such a value must be quoted, and an unquoted one is an error, not the value True)."""
    m = expect_map(value, f"{path.name}: attr_kinds", loc)
    out: dict[str, tuple[str, ...]] = {}
    for kind, values in m.items():
        where = m.loc_of(kind)
        if not isinstance(values, YSeq) or not values:
            raise SpecError(f"{path.name}: attr_kinds.{kind} must be a non-empty list of value names", where)
        bad = [v for v in values if not isinstance(v, str) or not v]
        if bad:
            raise SpecError(f"{path.name}: attr_kinds.{kind}: {bad[0]!r} is not a name (quote values YAML reads "
                            f"as booleans or numbers, e.g. 'ON')", where)
        if len({v.lower() for v in values}) != len(values):
            raise SpecError(f"{path.name}: attr_kinds.{kind}: a value is listed twice (values compare without case)",
                            where)
        if kind in _ATTR_LITERAL_TYPES:
            raise SpecError(f"{path.name}: attr_kinds.{kind}: {kind} is a literal type, not an enum kind", where)
        out[str(kind)] = tuple(values)
    return out


def _check_attr_types(instructions: dict[str, InstrSpec], kinds: dict[str, tuple[str, ...]]) -> None:
    """Every attribute's type is a literal type or a kind some file defines, and its default and
    ``implemented`` values are values of that kind: a misspelt kind would otherwise leave the
    attribute's values unchecked."""
    for spec in instructions.values():
        for attr in spec.attrs.values():
            loc = Loc(spec.file, spec.line, 1)
            where = f"{Path(spec.file).name}: entry '{spec.mnemonic}': attrs.{attr.name}"
            if attr.type in _ATTR_LITERAL_TYPES:
                continue
            values = kinds.get(attr.type)
            if values is None:
                raise SpecError(f"{where}: type '{attr.type}' is neither {' nor '.join(sorted(_ATTR_LITERAL_TYPES))} "
                                f"nor a kind under any file's attr_kinds", loc)
            known = {v.lower() for v in values}
            listed = ([attr.default] if attr.default is not None else []) + list(attr.implemented or ())
            stray = [v for v in listed if str(v).lower() not in known]
            if stray:
                raise SpecError(f"{where}: {stray[0]!r} is not a value of {attr.type} ({', '.join(values)})", loc)


_CACHE: dict[tuple[str, str, str], ISA] = {}


def load_isa(spec_dir: Path | str | None = None, machine: Machine | None = None) -> ISA:
    """Load every ``*.yaml`` of ``spec_dir`` (default ``isa_specs/instructions``), cached per
    (directory, machine)."""
    directory = Path(spec_dir) if spec_dir is not None else isa_dir() / "instructions"
    machine = machine if machine is not None else load_machine()
    key = (str(directory.resolve()), machine.name, machine.file)
    cached = _CACHE.get(key)
    if cached is not None:
        return cached
    files = sorted(directory.glob("*.yaml"))
    if not files:
        raise SpecError(f"no instruction spec files in {directory}", Loc(str(directory), 0, 0))
    instructions: dict[str, InstrSpec] = {}
    kinds: dict[str, tuple[str, ...]] = {}
    kind_files: dict[str, str] = {}
    for path in files:
        entries, file_kinds = load_file(path, machine)
        for kind, values in file_kinds.items():
            if kind in kinds:
                raise SpecError(f"{path.name}: attr_kinds.{kind} is defined twice (first in {kind_files[kind]})",
                                Loc(str(path), 1, 1))
            kinds[kind], kind_files[kind] = values, path.name
        for spec in entries:
            prev = instructions.get(spec.mnemonic)
            if prev is not None:
                raise SpecError(f"{path.name}: entry '{spec.mnemonic}': duplicate mnemonic "
                                f"(first defined in {Path(prev.file).name}:{prev.line})",
                                Loc(spec.file, spec.line, 1))
            instructions[spec.mnemonic] = spec
    _check_attr_types(instructions, kinds)
    isa = ISA(instructions, machine.name, kinds)
    _CACHE[key] = isa
    return isa
