"""Memories of one AI core: GM buffers per kernel argument and on-chip buffers as byte arrays.

On-chip buffers (UB, L1, L0A, L0B, L0C, bias, scaling) are flat ``uint8`` arrays sized from the
machine file; a tile is a typed view at a byte address, laid out as its type says (pto-text-format
§5.2). Tiles that overlap share bytes, exactly as level-3 kernels expect. GM holds one flat NumPy
array per pointer argument; views compute element addresses from shape/strides and are bounds
checked against that array.
"""

from __future__ import annotations

import mmap
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from ptoisa.machine import Buffer
from pyptoemu.core.byteranges import ByteRanges
from pyptoemu.errors import BoundsError, CapacityError, Loc
from pyptoemu.isa.arg import Accumulate

# --------------------------------------------------------------------------------------- layouts


@lru_cache(maxsize=512)
def fractal_offsets(rows: int, cols: int, blayout: str, slayout: str, fractal: int, esize: int) -> np.ndarray:
    """Element offset of logical (i, j) inside a boxed tile, as a (rows, cols) int64 array."""
    if fractal == 1024:
        ri, ci = 16, 16
    elif fractal in (32, 16):
        ri, ci = (16, 2) if slayout == "row_major" else (2, 16)
    else:
        ri, ci = (16, 32 // esize) if slayout == "row_major" else (32 // esize, 16)
    i = np.arange(rows, dtype=np.int64)[:, None]
    j = np.arange(cols, dtype=np.int64)[None, :]
    bi, ii, bj, jj = i // ri, i % ri, j // ci, j % ci
    inner = ii * ci + jj if slayout == "row_major" else jj * ri + ii
    if blayout == "col_major":
        outer = bj * rows * ci + bi * ri * ci
    else:
        outer = bi * cols * ri + bj * ri * ci
    offs = outer + inner
    offs.setflags(write=False)
    return offs


def tile_span_elems(rows: int, cols: int, blayout: str, slayout: str, fractal: int, esize: int) -> int:
    """Number of elements a tile's storage spans (a partly used box still reaches its end)."""
    if slayout == "none_box":
        return rows * cols
    offs = fractal_offsets(rows, cols, blayout, slayout, fractal, esize)
    return int(offs.max()) + 1 if offs.size else 0


# ------------------------------------------------------------------------------------ on-chip


@dataclass(eq=False, slots=True)
class OnChipBuffer:
    """One on-chip memory (e.g. UB for ``loc=vec``) as a byte array.

    The array covers the bytes tiles have been placed in so far, not the whole capacity: it grows
    (zero-filled, in whole ``PAGE``-byte pages, by at least a quarter each time so a run of
    placements moving up costs amortised constant copying) when a tile is placed beyond it, so a
    chip's 72 cores cost memory for what their kernels use, not 72 times every buffer's capacity.
    The bytes ever written (uninitialised-read checks) are a few byte ranges, not a mask."""

    PAGE = 4096

    spec: Buffer
    data: np.ndarray = field(init=False)
    next_free: int = 0  # bump allocator for tiles declared without an address
    allocations: dict = field(default_factory=dict)  # alloc op -> (addr, nbytes, name)
    written: ByteRanges = field(default_factory=ByteRanges)  # the bytes ever written

    def __post_init__(self) -> None:
        self.data = np.zeros(0, dtype=np.uint8)

    def cover(self, hi: int) -> None:
        """Make the array reach byte ``hi`` (exclusive); capacity was checked by the caller."""
        have = self.data.size
        if hi <= have:
            return
        page = self.PAGE
        n = min(self.spec.size, -(-max(hi, have + have // 4) // page) * page)
        data = np.zeros(n, dtype=np.uint8)
        data[:have] = self.data
        self.data = data

    @property
    def loc(self) -> str:
        return self.spec.loc

    def check_placement(self, addr: int, nbytes: int, name: str, loc: Loc) -> None:
        if addr % self.spec.align:
            raise CapacityError(
                f"{name}: address {addr} in {self.spec.name} is not a multiple of its "
                f"{self.spec.align}-byte alignment",
                loc,
            )
        if addr < 0 or addr + nbytes > self.spec.size:
            raise CapacityError(
                f"{name}: {nbytes} bytes at address {addr} exceed {self.spec.name} capacity of "
                f"{self.spec.size} bytes",
                loc,
            )
        self.cover(addr + nbytes)

    def allocate(self, key: object, nbytes: int, name: str, loc: Loc) -> int:
        """Address for a tile declared without ``addr``: stable per allocating op."""
        hit = self.allocations.get(key)
        if hit is not None:
            return hit[0]
        align = self.spec.align
        addr = (self.next_free + align - 1) // align * align
        if addr + nbytes > self.spec.size:
            live = ", ".join(f"{n} ({b} B at {a})" for a, b, n in self.allocations.values())
            raise CapacityError(
                f"{name} needs {nbytes} bytes but {self.spec.name} ({self.spec.loc}) has only "
                f"{self.spec.size - addr} of {self.spec.size} bytes left; allocated: {live or 'none'}",
                loc,
            )
        self.next_free = addr + nbytes
        self.allocations[key] = (addr, nbytes, name)
        self.cover(addr + nbytes)
        return addr

    def used_bytes(self) -> int:
        return sum(b for _, b, _ in self.allocations.values())


class Tile:
    """A typed window of an on-chip buffer: the runtime value of a ``!pto.tile_buf`` SSA name.

    ``logical()`` returns the tile as a (rows, cols) array in logical order; for row-major ND
    tiles it is a zero-copy view of the buffer. ``write(arr)`` stores ``arr`` at the top-left.
    """

    __slots__ = (
        "_nd",
        "_offs",
        "_view",
        "addr",
        "buffer",
        "cols",
        "dtype",
        "esize",
        "issued",
        "name",
        "nbytes",
        "rows",
        "type",
        "vcol",
        "vrow",
    )

    def __init__(self, buffer: OnChipBuffer, addr: int, ttype, dtype: np.dtype, vrow: int, vcol: int,
                 name: str):
        self.buffer = buffer
        self.addr = addr
        self.type = ttype
        self.dtype = dtype
        self.rows = ttype.rows
        self.cols = ttype.cols
        self.vrow = vrow
        self.vcol = vcol
        self.esize = dtype.itemsize
        self.name = name
        self.issued = None  # (vrow, vcol, addr, snapshot, timing key, byte range) of its last issue (tileop)
        self._nd = ttype.slayout == "none_box"
        self._view = None  # (buffer array, address, the (rows, cols) view) of an unboxed tile
        if self._nd:
            self._offs = None
            self.nbytes = self.rows * self.cols * self.esize
        else:
            self._offs = fractal_offsets(self.rows, self.cols, ttype.blayout, ttype.slayout,
                                         ttype.fractal, self.esize)
            self.nbytes = tile_span_elems(self.rows, self.cols, ttype.blayout, ttype.slayout,
                                          ttype.fractal, self.esize) * self.esize

    @property
    def loc(self) -> str:
        return self.type.loc

    def _flat(self) -> np.ndarray:
        return self.buffer.data[self.addr:self.addr + self.nbytes].view(self.dtype)

    def logical(self) -> np.ndarray:
        kept = self._view  # an unboxed tile's view (_nd_view), asked for by every operand read
        if kept is not None and kept[0] is self.buffer.data and kept[1] == self.addr:
            return kept[2]
        if self._nd:
            return self._nd_view()
        return self._flat()[self._offs]

    def _nd_view(self) -> np.ndarray:
        """The (rows, cols) view of an unboxed tile's bytes, kept while the buffer's array and the
        tile's address stay the same (a tile is read and written by every instruction on it)."""
        data, addr = self.buffer.data, self.addr
        kept = self._view
        if kept is not None and kept[0] is data and kept[1] == addr:
            return kept[2]
        flat = data[addr:addr + self.nbytes].view(self.dtype)
        if self.type.blayout == "col_major":
            view = flat.reshape(self.cols, self.rows).T
        else:
            view = flat.reshape(self.rows, self.cols)
        self._view = (data, addr, view)
        return view

    def check_fits(self, shape: tuple) -> None:
        """A result of ``shape`` fits this tile; ValueError says why not."""
        h, w = shape
        if h > self.rows or w > self.cols:
            raise ValueError(f"result {h}x{w} does not fit tile {self.rows}x{self.cols}")

    def write(self, arr: np.ndarray) -> None:
        h, w = arr.shape
        rows, cols = self.rows, self.cols
        if h > rows or w > cols:
            self.check_fits(arr.shape)  # raises, saying why
        if self._nd:
            kept = self._view  # (what _nd_view keeps: asked for by every write)
            if kept is not None and kept[0] is self.buffer.data and kept[1] == self.addr:
                view = kept[2]
            else:
                view = self._nd_view()
            if h == rows and w == cols:
                view[...] = arr  # the whole tile (most writes): no sub-view to build
            else:
                view[:h, :w] = arr
        else:
            self._flat()[self._offs[:h, :w]] = arr

    def byte_range(self) -> tuple[int, int]:
        return self.addr, self.addr + self.nbytes

    def retyped(self, ttype, dtype: np.dtype, vrow: int, vcol: int, name: str) -> Tile:
        return Tile(self.buffer, self.addr, ttype, dtype, vrow, vcol, name)


# ------------------------------------------------------------------------------------------ GM


# Stand-in data (a pointer argument the caller gave no input for) is generated in pieces of this
# many elements, each from its own seed (run seed, argument, piece), when something first touches
# it: a kernel that reads a few tiles of a huge view draws the random numbers of those tiles only,
# and an element's value does not depend on what was read before it.
STANDIN_CHUNK = 16384


def random_data(dtype_name: str, dtype: np.dtype, n: int, rng: np.random.Generator) -> np.ndarray:
    """Seeded stand-in data: normal floats, small ints (0..7 unsigned, -8..7 signed), random bools."""
    if dtype == np.bool_:
        return rng.integers(0, 2, n).astype(bool)
    if dtype.kind in "iu":
        lo = 0 if dtype.kind == "u" else -8
        return rng.integers(lo, 8, n).astype(dtype)
    if dtype == np.float32:
        return rng.standard_normal(n, dtype=np.float32)
    return rng.standard_normal(n, dtype=np.float32).astype(dtype)


# Stand-in room at least this large is reserved as an anonymous mapping (see _untouched_zeros);
# smaller buffers come from the ordinary allocator, which reuses memory that is already mapped.
MAPPED_RESERVE_BYTES = 16 * 2**20

# Whole-window writes into stand-in pieces not drawn yet wait at most this many to be marked
# (GMBuffer.unmarked): a bound on what a long run of stores keeps, far above what a run of stores
# between two draws needs to be marked in one go.
UNMARKED_WINDOWS = 1024


def _untouched_zeros(n: int, dtype: np.dtype, zeroed: bool = True) -> np.ndarray:
    """``n`` zero elements. A large reservation is an anonymous mapping, whose memory the operating
    system commits page by page when first written: room for a huge view costs address space, not
    memory, until the kernel touches it. With ``zeroed`` False a smaller one holds whatever the
    allocator had (no pass over it to zero it): room whose every element is drawn or written before
    anything reads it, as stand-in data (:meth:`GMBuffer._generate`)."""
    nbytes = n * dtype.itemsize
    if nbytes < MAPPED_RESERVE_BYTES:
        return np.zeros(n, dtype=dtype) if zeroed else np.empty(n, dtype=dtype)
    return np.frombuffer(mmap.mmap(-1, nbytes), dtype=dtype)


def window(flat: np.ndarray, base: int, sizes: tuple, strides: tuple, rows_views: dict) -> np.ndarray:
    """The window of ``flat`` (a C-contiguous 1-D array) at element ``base`` with ``sizes`` and
    element ``strides`` (non-negative, in bounds) as an N-D view, no copy.

    A 2-D window over rows of a fixed pitch (``strides == (pitch, 1)``, not crossing a row end:
    nearly every tload / tstore) is a slice of ``flat`` seen as rows of that pitch, a view kept in
    ``rows_views`` (per pitch, while ``flat`` is the same array): slicing costs a tenth of building
    an array over a buffer, which is what anything else gets (~3 us, twice per GM transfer)."""
    if len(sizes) == 2 and strides[1] == 1:
        pitch = strides[0]
        if pitch > 0 and base % pitch + sizes[1] <= pitch:
            kept = rows_views.get(pitch)
            if kept is None or kept[0] is not flat:
                kept = None
                if flat.flags.c_contiguous:
                    n_rows = flat.size // pitch
                    kept = rows_views[pitch] = (flat, flat[:n_rows * pitch].reshape(n_rows, pitch))
            if kept is not None:
                rows = kept[1]
                r0, c0 = divmod(base, pitch)
                if r0 + sizes[0] <= rows.shape[0]:
                    return rows[r0:r0 + sizes[0], c0:c0 + sizes[1]]
    es = flat.itemsize
    return np.ndarray(sizes, flat.dtype, buffer=flat, offset=base * es, strides=tuple([s * es for s in strides]))


@dataclass(eq=False, slots=True)
class GMBuffer:
    """Global memory behind one pointer argument.

    ``store`` is the flat backing array: the caller's input, or stand-in data generated lazily
    (``pending`` marks the :data:`STANDIN_CHUNK` pieces not generated yet). Whatever reads
    elements asks for them first (:meth:`ensure`, :meth:`ensure_window`); ``data`` is the whole
    array, every piece generated (outputs, rare whole-buffer readers). A whole-window write into
    pieces not generated yet (:meth:`cover_window`, a tstore) draws nothing: its elements are
    marked in ``covered``, a piece covered in full is never drawn, and a piece drawn later keeps
    what was written into it (the numbers are those a draw before the writes would have left).
    The marks are made when a piece is about to be drawn, not at each write: the windows written
    wait in ``unmarked`` (at most :data:`UNMARKED_WINDOWS` of them) until something draws."""

    index: int  # argument position N (named argN)
    dtype_name: str
    dtype: np.dtype
    store: np.ndarray | None = None  # flat backing array (None: no data, e.g. a timing-only run)
    size: int = 0  # elements the buffer holds (also known in a timing-only run, which has no data)
    given: bool = False
    written: bool = False  # the kernel wrote into it (an output)
    write_ready: bool = False  # written, and ``store`` is this buffer's own writable array (:meth:`writable`)
    view_shapes: list = field(default_factory=list)  # distinct (shape, strides) of views over it
    seed: int = 0  # stand-in data: each piece k is drawn from default_rng([seed, index, k])
    pending: np.ndarray | None = None  # per piece of stand-in data: not generated yet (None: none)
    drawn: bool = False  # some piece of the stand-in data is generated (or written in full) already
    backing: np.ndarray | None = None  # stand-in data: whole pieces (``store`` is its first ``size``)
    covered: np.ndarray | None = None  # per element of ``backing``: written before its piece was drawn
    unmarked: list = field(default_factory=list)  # (base, sizes, strides) written, not yet in ``covered``
    # per row pitch: ``store`` (``covered``) seen as rows of that pitch, for windows (:func:`window`)
    store_rows: dict = field(default_factory=dict)
    covered_rows: dict = field(default_factory=dict)
    name: str = field(init=False)  # argN: how accesses, findings and outputs name it

    def __post_init__(self) -> None:
        self.name = f"arg{self.index}"

    @property
    def data(self) -> np.ndarray | None:
        """Every element (stand-in data generated in full first)."""
        if self.pending is not None:
            self.ensure(0, self.size)
        return self.store

    @data.setter
    def data(self, values: np.ndarray | None) -> None:
        self.store, self.backing, self.pending, self.covered = values, None, None, None
        self.write_ready = False  # (the caller's array: copied before the first write)
        self.unmarked.clear()
        self.store_rows.clear()
        self.covered_rows.clear()

    def reserve_standin(self, n: int, seed: int) -> None:
        """Grow the buffer to ``n`` elements of stand-in data, generated when touched; the pieces
        generated so far (and what the kernel wrote into them) are kept."""
        chunk = STANDIN_CHUNK
        if self.unmarked:
            self._mark_covered()
        if self.covered is not None:  # pieces written in part: drawn (around what was written) first
            if self.pending is not None:
                chunk_mask = self.covered.reshape(-1, chunk).any(axis=1)
                self._generate(np.flatnonzero(self.pending & chunk_mask))
            self.covered = None
        pieces = -(-n // chunk)
        backing = _untouched_zeros(pieces * chunk, self.dtype, zeroed=False)  # (every element drawn or written)
        pending = np.ones(pieces, dtype=bool)
        if self.backing is not None:
            old = self.backing
            old_pending = self.pending if self.pending is not None else np.zeros(old.size // chunk, dtype=bool)
            done = np.flatnonzero(~old_pending)
            for k in done.tolist():  # copy only what was generated: the rest stays untouched
                backing[k * chunk:(k + 1) * chunk] = old[k * chunk:(k + 1) * chunk]
            pending[done] = False
            if done.size:
                self.drawn = True
        self.seed, self.backing, self.store, self.size = seed, backing, backing[:n], n
        self.store_rows.clear()
        self.covered_rows.clear()
        self.pending = pending if pending.any() else None

    def ensure(self, lo: int, hi: int) -> None:
        """Generate the stand-in data of elements [lo, hi) that is not generated yet."""
        pending = self.pending
        if pending is None or hi <= lo:
            return
        chunk = STANDIN_CHUNK
        k0, k1 = max(lo, 0) // chunk, min(-(-hi // chunk), pending.size)
        todo = np.flatnonzero(pending[k0:k1])
        if todo.size:
            self._generate(todo + k0)

    def ensure_window(self, base: int, sizes: tuple, strides: tuple) -> None:
        """Generate the stand-in data a strided window touches: the pieces of each of its rows
        (a few tiles of a huge view draw only their own numbers)."""
        pending = self.pending
        if pending is None or 0 in sizes:
            return
        chunk = STANDIN_CHUNK
        if len(sizes) < 2 or any(s < 0 for s in strides):
            lo = base + sum((z - 1) * s for z, s in zip(sizes, strides, strict=False) if s < 0)
            hi = base + sum((z - 1) * s for z, s in zip(sizes, strides, strict=False) if s > 0) + 1
            self.ensure(lo, hi)
            return
        hi = base + sum((z - 1) * s for z, s in zip(sizes, strides, strict=False)) + 1
        if not pending[base // chunk:-(-hi // chunk)].any():  # everything around it is drawn already
            return
        starts = np.full(1, base, dtype=np.int64)
        for z, s in zip(sizes[:-1], strides[:-1], strict=False):
            starts = (starts[:, None] + np.arange(z, dtype=np.int64)[None, :] * s).reshape(-1)
        first = starts // chunk
        last = (starts + (sizes[-1] - 1) * strides[-1]) // chunk
        spread = int((last - first).max())
        if spread <= 1:  # each row within one or two pieces
            pieces = np.concatenate([first, last])
        else:
            grid = first[:, None] + np.arange(spread + 1, dtype=np.int64)[None, :]
            pieces = grid[grid <= last[:, None]]
        todo = pieces[pending[pieces]]
        if todo.size:
            self._generate(np.unique(todo))

    def cover_window(self, base: int, sizes: tuple, strides: tuple, hi: int) -> bool:
        """A write of every element of the window is about to land in ``store``: mark them
        written, so that the pieces they fill are never drawn (checked when a piece is first
        needed: :meth:`_generate`). ``hi`` is the last element the window touches (its view
        knows it: :attr:`PartitionView.hi`). False (nothing marked) when the window has a
        negative stride, and the caller draws its pieces first as for a read."""
        pending = self.pending
        if pending is None or 0 in sizes:
            return True
        if min(strides) < 0:
            return False
        chunk = STANDIN_CHUNK
        # (count_nonzero: a third of what .any() costs on a few pieces; not asked while no piece is
        # drawn at all, an output that nothing reads: the stores of the stream kernel)
        if self.drawn and not np.count_nonzero(pending[base // chunk:hi // chunk + 1]):
            return True  # every piece around it drawn already: the write simply lands
        unmarked = self.unmarked
        unmarked.append((base, sizes, strides))
        if len(unmarked) >= UNMARKED_WINDOWS:
            self._mark_covered()
        return True

    def _mark_covered(self) -> None:
        """Mark the windows written so far in ``covered``. Done in one go when a piece is about to
        be drawn (or the list is full), not at each tstore: a mark at each store wrote into a
        mask as large as the buffer that no cache held any more (a 64x64 f32 store: 64 cache
        lines), several times what the marks cost together."""
        covered = self.covered
        if covered is None:
            covered = self.covered = _untouched_zeros(self.backing.size, np.dtype(bool))
        rows = self.covered_rows
        for base, sizes, strides in self.unmarked:
            window(covered, base, sizes, strides, rows)[...] = True
        self.unmarked.clear()

    def _generate(self, pieces: np.ndarray) -> None:
        """Draw the stand-in numbers of these pending pieces; a piece the kernel has written in
        full is only marked drawn, one written in part keeps what was written."""
        if self.unmarked:
            self._mark_covered()
        chunk, covered = STANDIN_CHUNK, self.covered
        for k in pieces.tolist():
            written = None
            if covered is not None:
                mask = covered[k * chunk:(k + 1) * chunk]
                if mask.all():
                    continue  # every element written before anything read it: nothing to draw
                if mask.any():
                    written = mask
            self._draw(k, written)
        self.pending[pieces] = False
        self.drawn = True
        if not self.pending.any():
            # every piece drawn: the written-elements mask has nothing left to say. Dropped now (the
            # outputs are gathered so), not with the run's objects at the next garbage collection:
            # the next run then gets its mask from memory already mapped, not page by page anew
            self.pending = self.covered = None
            self.covered_rows.clear()

    def _draw(self, k: int, written: np.ndarray | None) -> None:
        """Piece ``k``'s numbers, from its own seed; the elements ``written`` marks are kept."""
        chunk = STANDIN_CHUNK
        rng = np.random.default_rng([self.seed, self.index, k])
        piece = self.backing[k * chunk:(k + 1) * chunk]
        if written is None and self.dtype == np.float32:  # drawn in place: the same numbers as random_data's
            rng.standard_normal(dtype=np.float32, out=piece)
        elif written is None:
            piece[:] = random_data(self.dtype_name, self.dtype, chunk, rng)
        else:  # keep what the kernel wrote before the piece was drawn
            drawn = random_data(self.dtype_name, self.dtype, chunk, rng)
            keep = ~written
            piece[keep] = drawn[keep]

    def release(self) -> None:
        """The run is over and its result holds the outputs: drop the arrays here, so that they
        are freed with the result, not with the run's objects at some later garbage collection
        (they reference each other). A run after it then gets its memory from what is already
        mapped instead of faulting in fresh pages on every first write: two faults per 64x64 f32
        tstore, about a fifth of the data path of the stream kernel (benchmarks/speed_vs_simpy.py).
        What describes the buffer (size, dtype, the pieces still pending) stays; its data is gone."""
        self.store = self.backing = self.covered = None
        self.unmarked.clear()
        self.store_rows.clear()
        self.covered_rows.clear()

    def writable(self, lo: int = 0, hi: int | None = None) -> np.ndarray:
        """The backing array, elements [lo, hi) present (all by default), made a private copy
        first if it still is the caller's read-only input."""
        self.ensure(lo, self.size if hi is None else hi)
        if not self.store.flags.writeable:
            self.store = self.store.copy()
        self.written = self.write_ready = True
        return self.store


class Ptr:
    """``!pto.ptr<T>`` value: a GM buffer plus an element offset (``pto.addptr``)."""

    __slots__ = ("gm", "offset")

    def __init__(self, gm: GMBuffer, offset: int = 0):
        self.gm = gm
        self.offset = offset


class TensorView:
    """``!pto.tensor_view``: base pointer + shape + strides, all in elements."""

    __slots__ = ("ptr", "shape", "strides")

    def __init__(self, ptr: Ptr, shape: tuple[int, ...], strides: tuple[int, ...]):
        self.ptr = ptr
        self.shape = shape
        self.strides = strides


_new_view = object.__new__  # (PartitionView.moved: no attribute lookup of __new__ per window)


class PartitionView:
    """A window of a tensor view; tload/tstore see it as a 2-D (rows, cols) array."""

    __slots__ = ("base", "cols", "gm", "hi", "lo", "rows", "sizes", "strides")

    def __init__(self, gm: GMBuffer, base: int, sizes: tuple[int, ...], strides: tuple[int, ...]):
        self.gm = gm
        self.base = base
        self.sizes = sizes
        self.strides = strides
        cols = sizes[-1]
        rows = 1
        for s in sizes[:-1]:
            rows *= s
        self.rows, self.cols = rows, cols
        lo = hi = base
        for z, s in zip(sizes, strides, strict=False):
            if z > 0:
                if s >= 0:
                    hi += (z - 1) * s
                else:
                    lo += (z - 1) * s
        self.lo, self.hi = lo, hi  # element index range touched (inclusive)

    def moved(self, base: int) -> PartitionView:
        """This window at another base element: the same shape, so nothing per dimension is
        recomputed (a loop stepping a window along its tensor, ``lower_partition_view``)."""
        pv = _new_view(PartitionView)
        pv.gm = self.gm
        pv.sizes = self.sizes
        pv.strides = self.strides
        pv.rows = self.rows
        pv.cols = self.cols
        shift = base - self.base
        pv.base = base
        pv.lo = self.lo + shift
        pv.hi = self.hi + shift
        return pv

    def check_bounds(self, loc: Loc) -> None:
        n = self.gm.size
        if 0 in self.sizes:
            return
        if self.lo < 0 or self.hi >= n:
            raise BoundsError(
                f"view over {self.gm.name} reaches elements [{self.lo}, {self.hi}] but the buffer "
                f"holds {n} elements",
                loc,
            )

    def check_strides(self) -> None:
        """A window the DMA can move: no negative stride (checked where the window is read or
        written, with data or without: a timing-only run finds it at the same op)."""
        if min(self.strides) < 0:
            raise BoundsError(f"negative strides are not supported in views over {self.gm.name}")

    def _strided(self, drawn: bool = True) -> np.ndarray:
        """The window as an N-D view of the GM array (no copy; bounds were checked at creation),
        its stand-in data drawn first unless ``drawn`` is False (a whole-window write)."""
        self.check_strides()
        strides = self.strides
        gm = self.gm
        if drawn and gm.pending is not None:
            gm.ensure_window(self.base, self.sizes, strides)
        return window(gm.store, self.base, self.sizes, strides, gm.store_rows)

    def read(self) -> np.ndarray:
        if len(self.sizes) == 2:
            return self._strided()  # (rows, cols) already
        return self._strided().reshape(self.rows, self.cols)

    def write(self, arr: np.ndarray | Accumulate) -> None:
        h, w = arr.shape
        gm = self.gm
        if not gm.write_ready:
            gm.writable(0, 0)  # a private copy of the caller's input before the first write
        if isinstance(arr, Accumulate):  # read-modify-write at completion (atomic add)
            arr = arr.combine(self.read()[:h, :w])
        sizes = self.sizes
        if h == self.rows and w == self.cols:
            # a whole-window write draws no stand-in numbers for the elements it replaces
            covered = gm.pending is None or gm.cover_window(self.base, sizes, self.strides, self.hi)
            self._strided(drawn=not covered)[...] = arr if len(sizes) == 2 else arr.reshape(sizes)
        else:
            view = self._strided()
            v2 = view.reshape(self.rows, self.cols)
            if np.shares_memory(v2, self.gm.store):
                v2[:h, :w] = arr
            else:  # a non-collapsible stride pattern: write row by row through the N-D view
                full = v2.copy()
                full[:h, :w] = arr
                view[...] = full.reshape(self.sizes)

    def byte_range(self) -> tuple[int, int]:
        es = self.gm.dtype.itemsize
        return self.lo * es, (self.hi + 1) * es
