"""``pyptoemu.run``: the one entry point the CLI, the tests and the compiler runtime call."""

from __future__ import annotations

import gc
import math
import os
import stat
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Any

import numpy as np

from ptoisa.dtypes import is_known, np_dtype
from ptoisa.machine import Machine, load_machine
from ptoisa.suggest import did_you_mean
from ptoisa.text import ast as A
from ptoisa.text.parser import parse_file, parse_module, read_source
from ptoisa.text.printer import print_module
from ptoisa.tile.pipeline import is_tile_level, lower_tile_module
from pyptoemu.check import autosync
from pyptoemu.check.alignment import alignment_warnings
from pyptoemu.check.races import RaceDetector, access_map
from pyptoemu.core import arith
from pyptoemu.core.binding import SharedBinds
from pyptoemu.core.chip import Chip
from pyptoemu.core.memory import GMBuffer, PartitionView, Ptr
from pyptoemu.core.memsys import DMA_PIPES
from pyptoemu.core.placement import Launch, plan_launch
from pyptoemu.core.verify import target_machine, verify_module
from pyptoemu.errors import FindingsError, InputError, KernelFault, Loc, PtoError
from pyptoemu.isa.runnable import load_isa
from pyptoemu.output import write_npy, write_text
from pyptoemu.result import PIPE_ORDER, CoreStats, PipeStats, RunResult, bound_of
from pyptoemu.trace.bottleneck import CriticalPath
from pyptoemu.trace.chrome import TraceWriter


def load_kernel(kernel: str | os.PathLike | A.Module) -> A.Module:
    """A parsed module from a path, from `.pto` text, or as given."""
    if isinstance(kernel, A.Module):
        return kernel
    if isinstance(kernel, os.PathLike):
        return parse_file(os.fspath(kernel))
    text = str(kernel)
    if "\n" in text or "{" in text:
        return parse_module(text, "<string>")
    return parse_file(text)


class _Prepared:
    """A kernel text parsed once for :func:`run`, with what later runs of it can reuse: the
    prepared (synchronised) modules and which of them passed the verifier on which ISA and machine.

    Why: parsing and verifying cost about as much as a few hundred simulated instructions, and a
    sweep, a benchmark or the compiler's runtime runs the same text many times in one process. The
    key is the text itself (and the file name its locations carry), never a timestamp, so an edited
    file is parsed again. Only what is a pure function of its inputs is kept: the parse, the
    synchronisation pass's result (for each entry, sync mode, ISA and machine object), the fact
    that verification passed (errors are raised again each time, by running the verifier) with what
    else the text alone decides (:func:`_checked`: the warnings, the launch), what binding its ops
    finds that the chips running it share (binding.SharedBinds: each op's lowering, and the tile-op
    binding templates, tileop.TileOpBinding.detached: operand matching, checks and timings per
    operand shapes, on one ISA and machine) and the race check's access map (which buffers each pipe can reach). Nothing in a run changes the module it runs."""

    __slots__ = ("access_maps", "bound", "module", "prepared", "verified")

    def __init__(self, module: A.Module) -> None:
        self.module = module
        self.prepared: list[tuple] = []  # (entry fn, sync, isa, machine, autosync.prepare's result)
        self.verified: list[tuple] = []  # (module, entry fn, isa, machine, _checked's result) verified clean
        self.bound: list[tuple] = []  # (module, isa, machine, the chips' binding.SharedBinds)
        self.access_maps: list[tuple] = []  # (module, isa, machine, races.access_map's result)

    def prepare(self, fn: A.Function, sync: str | None, isa, mach: Machine) -> tuple:
        for f, s, i, m, result in self.prepared:
            if f is fn and s == sync and i is isa and m is mach:
                module, new_fn, mode, notices = result
                return module, new_fn, mode, list(notices)
        result = autosync.prepare(self.module, fn, sync, isa, mach)
        self.prepared.append((fn, sync, isa, mach, result))
        module, new_fn, mode, notices = result
        return module, new_fn, mode, list(notices)

    def checked(self, module: A.Module, fn: A.Function, isa, mach: Machine) -> tuple[list, Launch]:
        """:func:`_checked`, once per (module, entry, ISA, machine)."""
        for m, f, i, k, result in self.verified:
            if m is module and f is fn and i is isa and k is mach:
                return result
        result = _checked(module, fn, isa, mach)  # raises on any error: nothing is kept then
        self.verified.append((module, fn, isa, mach, result))
        return result

    def bindings(self, module: A.Module, isa, mach: Machine) -> SharedBinds:
        """What binding ``module`` on ``isa`` and ``mach`` finds that holds nothing of a run
        (Chip.bindings: its ops' lowerings and tile-op binding templates), filled by the runs that
        bind its ops."""
        for m, i, k, bound in self.bound:
            if m is module and i is isa and k is mach:
                return bound
        bound = SharedBinds()
        self.bound.append((module, isa, mach, bound))
        return bound

    def access_map(self, module: A.Module, isa, mach: Machine) -> dict:
        """:func:`~pyptoemu.check.races.access_map`, once per (module, ISA, machine) (a race detector
        works on its own copy)."""
        for m, i, k, access in self.access_maps:
            if m is module and i is isa and k is mach:
                return access
        access = access_map(module, isa, mach)
        self.access_maps.append((module, isa, mach, access))
        return access


_PREPARED: OrderedDict[tuple[str, str], _Prepared] = OrderedDict()
PREPARED_TEXTS = 16  # kernel texts whose parse run() keeps (the most recently run ones)
PREPARED_MAX_CHARS = 1 << 18  # longer texts are parsed each time (their trees would hold much memory)


def _kernel_for_run(kernel: str | os.PathLike | A.Module) -> tuple[A.Module, _Prepared | None]:
    """:func:`load_kernel` for :func:`run`: a text (or file) run before in this process is not
    parsed again. A module given as such is used as is (the caller may change it between runs)."""
    if isinstance(kernel, A.Module):
        return kernel, None
    text = os.fspath(kernel) if isinstance(kernel, os.PathLike) else str(kernel)
    if isinstance(kernel, os.PathLike) or not ("\n" in text or "{" in text):
        name = str(Path(text))
        text = read_source(text)
    else:
        name = "<string>"
    key = (name, text)
    hit = _PREPARED.get(key)
    if hit is not None:
        _PREPARED.move_to_end(key)
        return hit.module, hit
    module = parse_module(text, name)
    if len(text) > PREPARED_MAX_CHARS or is_tile_level(module):  # the tile passes lower it in place
        return module, None
    hit = _PREPARED[key] = _Prepared(module)
    while len(_PREPARED) > PREPARED_TEXTS:
        _PREPARED.popitem(last=False)
    return module, hit


# The machine and ISA each machine name given to run() named, by name and spec directory
# (PYPTOEMU_ISA_DIR). ptoisa reads each file once already (cached by resolved path); what this saves
# is finding the files again: pathlib building, resolving and stat-ing their paths cost about 0.45 M
# machine instructions per run (callgrind), some 0.4% of a timing-only run of the stream kernel. A
# path or a name with an alternative (``a2a3:option``) is not kept: what it names may depend on
# the working directory.
_MACHINES: dict[tuple[str, str | None], tuple[Machine, Any]] = {}


def _machine_and_isa(name: str) -> tuple[Machine, Any]:
    """``load_machine(name)`` and its ISA (``load_isa``), remembered for a plain machine name."""
    key = (name, os.environ.get("PYPTOEMU_ISA_DIR"))
    hit = _MACHINES.get(key)
    if hit is None:
        mach = load_machine(name)
        hit = (mach, load_isa(machine=mach))
        if not (name.endswith((".yaml", ".yml")) or os.sep in name or "/" in name or ":" in name):
            _MACHINES[key] = hit
    return hit


def _checked(module: A.Module, fn: A.Function, isa, mach: Machine) -> tuple[list, Launch]:
    """What the text alone decides before a run: every op bound and checked (raises
    :class:`~pyptoemu.core.verify.ModuleVerifyError` with every error), the warnings (finding
    kind, message, location: the alignment rules of §5.3, operands the emulator ignores) and where
    each block runs (the launch)."""
    ignored = verify_module(module, fn, isa, mach)
    warnings = [("alignment", message, loc) for message, loc in alignment_warnings(module, mach)]
    warnings += [("ignored", message, loc) for message, loc in ignored]
    return warnings, plan_launch(module, fn, mach.name)


def choose_entry(module: A.Module, entry: str | None) -> A.Function:
    """--entry, else the function marked pto.entry, else the only function."""
    loc = module.loc or Loc(module.file, 1, 1)
    if entry is not None:
        name = entry.lstrip("@")
        fn = module.function(name)
        if fn is None:
            names = [f.name for f in module.functions]
            raise InputError(f"no function named '{name}'{did_you_mean(name, names)} "
                             f"(functions: {', '.join(names) or 'none'})", loc)
        return fn
    marked = [f for f in module.functions if "pto.entry" in f.attrs]
    if len(marked) == 1:
        return marked[0]
    if len(marked) > 1:
        raise InputError("several functions are marked pto.entry: "
                         + ", ".join(f.name for f in marked) + "; choose one with --entry", loc)
    if len(module.functions) == 1:
        return module.functions[0]
    if not module.functions:
        raise InputError("the module has no function to run", loc)
    public = [f for f in module.functions if not f.private]
    if len(public) == 1:
        return public[0]
    raise InputError("several functions could be the entry: "
                     + ", ".join(f.name for f in module.functions)
                     + "; mark one with attributes {pto.entry} or pass --entry NAME", loc)


def coerce_input(name: str, value: Any, want: np.dtype, loc: Loc | None = None) -> np.ndarray:
    """The one rule for array inputs, shared by ``pyptoemu.run`` and ``pypto.runtime.run``.

    A NumPy array must already have the parameter's dtype (no silent conversion of data the caller
    built: a float64 array for an f32 pointer is an :class:`InputError` naming both dtypes). Lists,
    tuples and Python scalars are converted to the parameter's dtype. A ``bf16`` array saved by
    ``np.save`` (raw 2-byte void) is read as bf16.
    """
    if isinstance(value, (np.ndarray, np.generic)):
        arr = np.asarray(value)
        if arr.dtype == want:
            return arr
        if want.name == "bfloat16" and arr.dtype.kind == "V" and arr.dtype.itemsize == 2:
            return arr.view(np.uint16).view(want)  # how ml_dtypes bfloat16 arrays are saved
        raise InputError(f"input {name} has dtype {arr.dtype} but the parameter is {want}; convert it "
                         f"with .astype(np.{_numpy_name(want)}) if that is what you mean", loc)
    try:
        return np.asarray(value, dtype=want)
    except (TypeError, ValueError) as e:
        raise InputError(f"input {name} cannot be read as an array of {want}: {e}", loc) from None


def _numpy_name(dtype: np.dtype) -> str:
    return dtype.name if hasattr(np, dtype.name) else f"dtype({dtype.name!r})"


def _check_npy_header(path: str | os.PathLike) -> None:
    """A `.npy` file holds the bytes its header promises (checked before NumPy allocates the array:
    a header claiming 2^40 elements must not allocate terabytes). Raises ValueError."""
    with open(path, "rb") as f:
        try:
            version = np.lib.format.read_magic(f)
        except ValueError:  # empty, a pickle, a .npz, text or garbage: np.load would guess at it
            raise ValueError("not a .npy file (it does not start with NumPy's \\x93NUMPY header)") from None
        if version == (1, 0):
            shape, _, dtype = np.lib.format.read_array_header_1_0(f)
        else:
            shape, _, dtype = np.lib.format.read_array_header_2_0(f)
        if dtype.hasobject:
            raise ValueError(f"the array holds Python objects (dtype {dtype}), not numbers")
        count = math.prod(shape)
        have = os.fstat(f.fileno()).st_size - f.tell()
        if count * dtype.itemsize > have:
            raise ValueError(f"the header claims {count} elements of {dtype} ({count * dtype.itemsize} bytes) "
                             f"but the file holds {have} bytes of data")


def _load_input(name: str, value: Any, dtype_name: str, loc: Loc) -> np.ndarray:
    if isinstance(value, (str, os.PathLike)):
        value = _load_npy(name, value, loc)
    want = np_dtype(dtype_name)
    try:
        arr = coerce_input(name, value, want, loc)
    except InputError as e:
        raise InputError(f"{e.message} (the kernel's pointer is !pto.ptr<{dtype_name}>)", loc) from None
    # Read-only view of the caller's data: copied on the first write (GMBuffer.writable), so
    # inputs the kernel only reads cost nothing and the caller's arrays are never modified.
    flat = np.ascontiguousarray(arr).reshape(-1)
    view = flat.view()
    view.flags.writeable = False
    return view


def read_npy_file(path: str | os.PathLike) -> np.ndarray:
    """``np.load`` of a regular ``.npy`` file only (a FIFO or device would block or never end; an
    empty file, a pickle or a header promising more than the file holds is refused before NumPy
    reads it). Raises ValueError or OSError saying why; ``--input`` and ``--expect`` both read so."""
    if not stat.S_ISREG(os.stat(path).st_mode):
        raise ValueError("not a regular file")
    _check_npy_header(path)
    return np.load(path, allow_pickle=False)


def _load_npy(name: str, path: str | os.PathLike, loc: Loc) -> np.ndarray:
    try:
        return read_npy_file(path)
    except MemoryError:
        raise InputError(f"cannot read input {name} from {path}: out of memory", loc) from None
    except (OSError, ValueError) as e:
        raise InputError(f"cannot read input {name} from {path}: {getattr(e, 'strerror', None) or e}",
                         loc) from None


def _scalar_arg(name: str, value: Any, tname: str, loc: Loc):
    if isinstance(value, str):
        v = value.strip().lower()
        if v in ("true", "false"):
            value = v == "true"
        else:
            try:
                value = int(v, 0)
            except ValueError:
                try:
                    value = float(v)
                except ValueError:
                    raise InputError(f"argument {name}: cannot read '{value}' as {tname}", loc) from None
    if tname == "i1":  # true/false (or 0/1); anything else is not a truth value we should guess
        if isinstance(value, (bool, np.bool_)) or (isinstance(value, (int, np.integer)) and value in (0, 1)):
            return bool(value)
        raise InputError(f"argument {name} is i1 (true or false) but got {value!r}", loc)
    if isinstance(value, (bool, np.bool_)):
        raise InputError(f"argument {name} is {tname} but got the boolean {value!r}", loc)
    if tname.startswith(("f", "bf")):
        return float(value)
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        raise InputError(f"argument {name} is {tname} but got {value}", loc)
    if not isinstance(value, (int, float)):
        raise InputError(f"argument {name} is {tname} but got {value!r}", loc)
    if not arith.fits(int(value), tname):
        raise InputError(f"argument {name}: {int(value)} is out of range for {tname}", loc)
    return int(value)


def bind_arguments(fn: A.Function, inputs: Mapping[str, Any], args: Mapping[str, Any], core) -> list:
    """Values of the entry's arguments; ``core`` is anything with ``.memory`` (a chip or a core)."""
    values: list = []
    used = set()
    for i, (aname, t) in enumerate(zip(fn.args, fn.arg_types, strict=False)):
        key = f"arg{i}"
        loc = fn.loc
        if isinstance(t, A.PtrType) or (isinstance(t, A.MemRefType) and t.space == "gm"):
            elem = t.elem
            if not is_known(elem):
                raise InputError(f"argument {key} ({aname}) has unknown element type {elem}", loc)
            gm = GMBuffer(i, elem, np_dtype(elem))
            if key in inputs:
                given = _load_input(key, inputs[key], elem, loc)
                gm.size, gm.given = given.size, True
                if core.data:
                    gm.data = given
                used.add(key)
            core.memory.gm[i] = gm
            ptr = Ptr(gm)
            if isinstance(t, A.MemRefType):
                shape = tuple(d if d is not None else 0 for d in t.shape)
                strides = t.strides if t.strides and None not in t.strides else _row_major(shape)
                core.memory.note_view(ptr, shape, tuple(strides), loc)
                values.append(PartitionView(gm, 0, shape, tuple(strides)))
            else:
                values.append(ptr)
        elif isinstance(t, A.ScalarType):
            src = args if key in args else inputs if key in inputs else None
            if src is None:
                raise InputError(f"scalar argument {key} ({aname}: {t.name}) needs a value: "
                                 f"--arg {key}=VALUE", loc)
            used.add(key)
            values.append(_scalar_arg(key, src[key], t.name, loc))
        else:
            raise InputError(f"argument {key} ({aname}) has type {t}, which the emulator cannot bind yet",
                             loc)
    names = {f"arg{i}" for i in range(len(fn.args))}
    pointers = sorted(k for k in set(args) - used if k in names)
    if pointers:
        what = f"{pointers[0]} of @{fn.name} is a pointer: --arg sets scalars; give its data" if len(pointers) == 1 \
            else f"{', '.join(pointers)} of @{fn.name} are pointers: --arg sets scalars; give their data"
        raise InputError(f"{what} with --input {pointers[0]}=FILE.npy", fn.loc)
    extra = sorted((set(inputs) | set(args)) - used)
    if extra:
        raise InputError(f"the entry @{fn.name} has no argument {', '.join(extra)} "
                         f"(it takes arg0..arg{len(fn.args) - 1})", fn.loc)
    return values


def _row_major(shape: tuple) -> tuple:
    strides, acc = [], 1
    for d in reversed(shape):
        strides.append(acc)
        acc *= max(d, 1)
    return tuple(reversed(strides))


def _shaped_output(gm: GMBuffer) -> np.ndarray:
    data = gm.data
    if len(gm.view_shapes) == 1:
        shape, strides = gm.view_shapes[0]
        if _row_major(shape) == tuple(strides) and int(np.prod(shape)) == data.size:
            return data.reshape(shape)
    return data


def run(
    kernel: str | os.PathLike | A.Module,
    inputs: Mapping[str, Any] | None = None,
    args: Mapping[str, Any] | None = None,
    machine: str | Machine | None = None,
    seed: int = 0,
    trace: str | os.PathLike | None = None,
    entry: str | None = None,
    output_dir: str | os.PathLike | None = None,
    sync: str | None = None,
    races: str = "error",
    max_steps: int = 10_000_000,  # loop iterations before the run is stopped as endless
    blocks: int = 1,
    dump_passes: str | os.PathLike | None = None,
    software_pipeline: bool = False,
    data: bool = True,
    progress: Callable[[Any], AbstractContextManager] | None = None,
    keep_log: bool = False,
) -> RunResult:
    """Run a `.pto` kernel on the emulated AI core.

    ``kernel`` is a path, `.pto` text or a parsed module. ``inputs`` binds pointer arguments
    (``{"arg0": array_or_npy_path}``); pointers not given get seeded random data. ``args`` binds
    scalar arguments. ``sync``: ``"auto"`` inserts synchronisation first, ``"serial"`` runs in program
    order (any sync replaced by a full barrier after every instruction: the reference that ``auto``
    must match bit for bit), ``"asis"`` runs the text as written, ``None`` picks ``auto`` when the
    kernel has no sync op at all. ``races``: ``error``, ``warn`` or ``off``. ``blocks``: how many
    blocks of the entry the chip runs (each sees its ``get_block_idx``; more blocks than cores run
    in waves). A kernel in the tile-level SSA form (seed 002) is lowered first (``dump_passes``:
    write the IR after each pass there; ``software_pipeline``: ping-pong its loops) and runs with
    the synchronisation its tokens became (``asis``). ``machine``: a name, a YAML path or a loaded
    machine; ``None`` runs on the machine the module's ``pto.target_arch`` names (a2a3 when it
    names none). Every op is bound and checked before anything runs. ``max_steps``: loop iterations
    before the run stops as endless. ``progress``: a factory of context managers that watch the chip
    while it runs (the CLI's progress bar, :mod:`pyptoemu.progress`). Raises :class:`InputError` for
    bad input (all verifier errors at once: :class:`pyptoemu.core.verify.ModuleVerifyError`), and
    :class:`KernelFault` whenever the command line would exit 1: the kernel faulted (deadlock,
    bounds, capacity, ...; the trace, if asked for, is still written up to the fault) or the run
    ended with an error finding such as a race (``races="warn"`` makes races warnings, so such a run
    returns). The exception carries the :class:`RunResult` as ``.result``. ``data=False`` runs timing
    only: the same schedule and cycles, bounds and race checks, but no input is generated and no
    value computed (no outputs); a kernel whose control flow reads data (``tgetval``,
    ``load_scalar``) stops with an :class:`InputError`. ``keep_log=True`` keeps every issued
    instruction on its core's ``trace_log`` (``result.chip.cores[k].trace_log``) for tools that
    inspect the schedule afterwards; without it (and without ``trace``) memory does not grow with the
    number of instructions: the race check, the statistics and the critical path follow the run.
    """
    if races not in ("error", "warn", "off"):
        raise InputError(f"races must be error, warn or off, not {races!r}")
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:  # NumPy's generators take seeds >= 0
        raise InputError(f"seed must be a non-negative integer, not {seed!r}")
    inputs = dict(inputs or {})
    args = dict(args or {})
    module, prepared = _kernel_for_run(kernel)
    if isinstance(machine, Machine):
        target_machine(module, machine.name)  # a module built for another arch is an error
        mach, isa = machine, load_isa(machine=machine)
    else:
        mach, isa = _machine_and_isa(target_machine(module, machine))
    tile_notes: list[str] = []
    # the tile-level SSA form: lowered here, run with its own tokens' sync (a text kept is never in
    # it, _kernel_for_run: the walk over its ops is not made again)
    if prepared is None and is_tile_level(module):
        module = lower_tile_module(module, isa, mach, dump_dir=dump_passes, software_pipeline=software_pipeline,
                                   notes=tile_notes)
        sync = sync or "asis"
    elif dump_passes is not None or software_pipeline:  # said, not silently dropped: the user asked for them
        asked = [o for o, on in (("--dump-passes", dump_passes is not None), ("--software-pipeline", software_pipeline))
                 if on]
        tile_notes.append(f"{module.file}: {' and '.join(asked)} only appl{'y' if len(asked) > 1 else 'ies'} to a "
                          "kernel in the tile-level form (seed 002), which is lowered first; this one is level-2 "
                          ".pto already: ignored")
    fn = choose_entry(module, entry)
    if prepared is not None:  # a text run before: its synchronised module and verdict are kept
        module, fn, mode, notices = prepared.prepare(fn, sync, isa, mach)
    else:
        module, fn, mode, notices = autosync.prepare(module, fn, sync, isa, mach)
    notices = [*tile_notes, *notices]
    if not isinstance(blocks, int) or isinstance(blocks, bool) or blocks < 1:
        raise InputError(f"blocks must be a positive integer, not {blocks!r}")
    # every op bound and checked before anything runs, and what else the text alone decides
    checked = prepared.checked if prepared is not None else _checked
    warnings, launch = checked(module, fn, isa, mach)
    chip = Chip(module, isa, mach, seed=seed, max_steps=max_steps, data=data, keep_log=keep_log,
                trace=trace is not None, bindings=prepared.bindings(module, isa, mach) if prepared else None)
    for kind, message, loc in warnings:  # §5.3: the back end warns, so do we
        chip.findings.add(kind, "warning", message, [loc] if loc else [])
    # what follows the run while it goes (core/recorder.py): the race check and the critical path
    neck = CriticalPath()
    chip.recorder.consumers.append(neck)
    if races != "off":
        access = prepared.access_map(module, isa, mach) if prepared is not None else access_map(module, isa, mach)
        detector = RaceDetector(chip, "error" if races == "error" else "warning", access)
        chip.recorder.consumers.append(detector)
        chip.recorder.epoch_watchers.append(detector)
    if launch.notice:
        notices = [*notices, launch.notice]
    values = bind_arguments(fn, inputs, args, chip)
    writer = TraceWriter(trace, chip) if trace is not None else None  # the trace streams to its file
    if writer is not None:
        chip.recorder.consumers.append(writer)
    try:
        return _run_chip(chip, fn, values, blocks, launch, progress, (mach, mode, notices), output_dir, writer)
    except BaseException:
        if writer is not None:
            writer.discard()  # nothing half-written is left (a finished trace was renamed already)
        raise


def _run_chip(chip: Chip, fn: A.Function, values: list, blocks: int, launch, progress, how: tuple, output_dir,
              writer: TraceWriter | None) -> RunResult:
    """Run the chip, let what follows the run conclude, build the result, write the files."""
    mach, mode, notices = how
    neck = chip.recorder.consumers[0]
    fault: KernelFault | None = None
    # (the recorder finishes before the caller's collection thresholds come back: the collection
    # that then follows at once does not scan the hundreds of records it held until then)
    with _fewer_collections():
        try:
            with progress(chip) if progress is not None else nullcontext():
                cycles = chip.run(fn, values, blocks, launch)
        except KernelFault as e:  # the run stopped: what ran before still reports (findings, trace)
            fault = e
            cycles = int(chip.env.now)
        # Races are checked on what actually ran, inserted sync included: that is the pass's judge.
        chip.recorder.finish()  # the race findings are added here
        chip.end_run()  # (before the thresholds come back: what it lets go of is freed, not scanned)
    if fault is not None:
        _fault_finding(chip, fault)
    result = _result(chip, fn.name, mach, cycles, mode, notices, blocks, faulted=fault is not None,
                     neck=neck)
    for gm in chip.memory.gm.values():  # the outputs live on in the result alone (GMBuffer.release)
        gm.release()
    if output_dir is not None and fault is None:
        save_outputs(result, output_dir)
    if writer is not None:
        result.trace = str(writer.close(result))
        result.traces = [result.trace]
    if fault is None and result.errors():
        fault = FindingsError(f"the run ended with {len(result.errors())} error finding(s): "
                              + "; ".join(str(f) for f in result.errors()), None)
    if fault is not None:
        raise attach_result(fault, result)
    return result


# Objects allocated between two collections of the youngest generation while a chip runs (CPython's
# default is 700). A run allocates a few objects per instruction (the instruction, its operand
# snapshots, its node on the critical path), nearly all freed by reference counting shortly after:
# at the default the collector scans them, and every object the run holds, some 15 times per
# thousand instructions, about 8% of a timing-only run (benchmarks/speed_vs_simpy.py).
RUN_GC_THRESHOLD = 20_000


@contextmanager
def _fewer_collections() -> Iterator[None]:
    """Collect garbage cycles less often while the chip runs; the caller's thresholds come back after."""
    before = gc.get_threshold()
    gc.set_threshold(max(before[0], RUN_GC_THRESHOLD), *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)


def attach_result(fault: KernelFault, result: RunResult) -> KernelFault:
    """Give ``fault`` the run's result, its findings and trace; name other findings in its message."""
    fault.result = result
    fault.findings = list(result.findings)
    fault.trace = result.trace
    if not isinstance(fault, FindingsError):
        others = [str(f) for f in result.findings if f.kind != fault.kind]
        if others and "\nalso found before the fault:" not in fault.message:
            fault.message += "\nalso found before the fault:\n" + "\n".join(f"  {o}" for o in others)
    return fault


def _fault_finding(chip: Chip, fault: KernelFault) -> None:
    """The fault as a finding (a deadlock already is one): on the pipe running the faulting
    instruction, else on the scalar unit, at the cycle the run stopped."""
    if fault.kind == "deadlock":
        return
    many = len(chip.cores) > 1
    pipes = [f"{c.label}:{name}" if many else name for c in chip.cores for name, pipe in c.pipes.items()
             if pipe.current is not None and fault.loc is not None and pipe.current.loc == fault.loc]
    chip.findings.add(fault.kind, "error", fault.message, [fault.loc] if fault.loc else [],
                      pipes or [f"{chip.cores[0].label}:S" if many else "S"], cycle=int(chip.env.now))


def _result(chip: Chip, entry: str, mach: Machine, cycles: int, mode: str, notices: list[str], blocks: int,
            faulted: bool, neck: CriticalPath) -> RunResult:
    outputs: dict[str, np.ndarray] = {}
    if not faulted:
        for _i, gm in sorted(chip.memory.gm.items()):
            if gm.written and gm.store is not None:
                outputs[gm.name] = _shaped_output(gm)
    cores = [_core_stats(c) for c in chip.cores]
    pipes = {p: PipeStats(sum(c.pipes[p].busy_cycles for c in cores), sum(c.pipes[p].instructions for c in cores))
             for p in PIPE_ORDER}
    # the critical path through every core, back from the instruction that finished last
    # what the shared HBM/L2 held back, for the verdict (core/memsys.py); the cores moving GM data
    streaming = sum(1 for c in chip.cores if any(p.count for n, p in c.pipes.items() if n in DMA_PIPES))
    held = chip.memsys.held_back({p: st.busy_cycles for p, st in pipes.items()}, streaming)
    path = neck.result(cycles, held) if chip.cores else None
    return RunResult(
        entry=entry, cycles=cycles, time_us=mach.cycles_to_us(cycles), pipes=pipes,
        bound_pipe=path.pipe if path is not None else bound_of(pipes), bound=path.text if path is not None else "",
        outputs=outputs, findings=list(chip.findings), cores=cores, machine=mach.name,
        status="faulted" if faulted else "findings" if chip.findings.errors() else "ok", sync_mode=mode,
        notices=notices, printed=[t for c in chip.cores for t in c.printed],
        instructions=sum(p.instructions for p in pipes.values()), core=chip.cores[0] if chip.cores else None,
        blocks=blocks, chip=chip, launch=(chip.launch_kernel, chip.launch_block),
    )


def _core_stats(core) -> CoreStats:
    pipes = {p: PipeStats(0, 0) for p in PIPE_ORDER}
    pipes["S"] = PipeStats(int(core.scalar.busy), int(core.scalar.count))
    for name, pipe in core.pipes.items():
        pipes[name] = PipeStats(int(pipe.busy), int(pipe.count))
    return CoreStats(core.label, core.kind.name, list(core.blocks_run), int(core.finished_at), pipes)


def lower(kernel: str | os.PathLike | A.Module, output: str | os.PathLike | None = None, machine: str | Machine = "a2a3",
          dump_passes: str | os.PathLike | None = None, software_pipeline: bool = False) -> tuple[str, list[str]]:
    """Lower a tile-level kernel to level-2 `.pto` text (written to ``output`` when given); returns
    the text and the pipeline's notes."""
    module = load_kernel(kernel)
    mach = machine if isinstance(machine, Machine) else load_machine(str(machine))
    if not is_tile_level(module):
        raise InputError("the kernel is not in the tile-level form (no pto.tile.* op, pto.memref argument "
                         "or pto.constant): it is level-2 already", module.loc or Loc(module.file, 1, 1))
    notes: list[str] = []
    lowered = lower_tile_module(module, load_isa(machine=mach), mach, dump_dir=dump_passes,
                                software_pipeline=software_pipeline, notes=notes)
    text = print_module(lowered)
    if output is not None:
        write_text(output, text)
    return text, notes


def save_outputs(result: RunResult, output_dir: str | os.PathLike) -> dict[str, str]:
    """Write each output as ``output_dir/argN.npy`` (atomically, never through a symlink)."""
    out = Path(output_dir)
    return {name: str(write_npy(out / f"{name}.npy", arr)) for name, arr in result.outputs.items()}


__all__ = ["CoreStats", "PipeStats", "PtoError", "RunResult", "attach_result", "choose_entry", "coerce_input",
           "load_kernel", "lower", "run"]
