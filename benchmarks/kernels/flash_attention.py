"""Flash attention forward, one head, on one core group (1 AIC + 2 AIV), as a `.pto` kernel.

O = softmax(Q K^T / sqrt(d)) V with Q [S0, d], K and V [S1, d] fp16, O [S0, d] fp32. S1 is walked in
logical tiles of PIECES x T = 256 keys (one online-softmax step each), each made of T = 128-key
cube pieces (the organisation of pto-isa's a2a3 kernel: a "logical S1 tile" of several cube tiles):

* cube (AIC): K^T and V of a logical tile are one DMA each (K rows are contiguous) into
  double-buffered L1 tiles; per piece, S = Q K^T into L0C is pushed to the vector cores (split 1:
  each takes S0/2 rows). P of a logical tile comes back as PIECES fp16 pieces; PV is accumulated in
  one L0C tile over the pieces (tmatmul, then tmatmul.acc, in PV_CHUNK = 64-key chunks with two L0A /
  L0B buffers so the extraction of a chunk overlaps the matmul of the other) and pushed once per
  logical tile. S of tile i + 2 is computed before PV of tile i (LOOKAHEAD = 2); V is loaded one step
  before its PV, so the P pops never queue behind a load that waits for the vector cores.
* vector (AIV, S0/2 = 64 rows each), per logical tile: each S piece is copied to fp16 as it arrives
  (the row max only shifts the exponent: taken on the fp16 copies, tmax of the pieces then one
  trowmax, as a 256-key row reduction costs); m' = max(m, that max), alpha = exp(scale (m - m'));
  S - m' in f32 (trowexpandsub), then fp16 for scale, exp and the push (P is fp16 for the cube
  anyway); l = l alpha + rowsum(P) over the fp16 P the cube multiplies (tadd of the pieces, one
  fp16 trowsum accumulating in f32); when PV arrives, O = O alpha + PV. At the end O / l is stored.
  ``shift_f32=False`` keeps all of P in fp16 (S rounded to fp16 before the shift).
* the hand-offs use one explicit `initialize_l2g2l_pipe` (dir_mask 3): 4 GM slots per direction
  in a workspace (arg4) and three local slots in each consumer (UB on the vector cores, each keeping
  its half of a slot; L1 on the cube), as on A2/A3, where cube and vector cores share only GM.

The program is straight-line (every tile unrolled), so buffer parities need no control flow.
Synchronisation is explicit and per resource: every L1 / L0 buffer and accumulator is released to
its producer by its own flag (event id), so a pipe waits for the one instruction it depends on;
`barrier <PIPE_V>` between dependent vector ops, independent ones grouped between two barriers.

Figures (a2a3, S0=128, S1=8192, d=128, timing only; benchmarks/timing_fidelity.py): makespan 131,805
+ launch 12,905 = 78.2 us against the published 74.5 us (1.05), V-bound (86% of the makespan is V
work on the critical path). Before (128-key softmax steps, f32 P path, K / V loaded per 128 keys,
one PV push per 128 keys): 196,361 + 12,905 = 113.1 us (1.52). No cost number was changed.
Per 256-key step in the steady state (S1=4096 run), 3,832 cycles:

    each vector core's V pipe, 3,581 busy (64 rows x 256 keys):
      tcvt (S to fp16 twice per piece, 2 row stats)   598     trowexpandsub (f32, 2)      532
      trowmax, trowsum (fp16 64x128, one each)    462 each   tadd (P pieces, O, l)        416
      texp (P pieces, alpha)                           297     trowexpandmul (O alpha)     266
      tmuls (scale), tmax (pieces, row max)       162, 150     13 PIPE_V barriers          208
    the cube: FIX 3,165 (3 pushes of a 64 KiB f32 accumulator through GM, 265 + 65,536 / 83
      each: 2 S pieces and the PV sum), MTE2 3,072 (K^T and V, 64 KiB each, 935; two P pops,
      601), M 2,132, MTE1 1,730.

The published time leaves (137,825 - 12,905) / 32 = 3,904 cycles per 256-key step; the steady
state here takes 3,832 (0.98), the rest of the 5% is the pipeline filling and draining (the first
S pieces before any softmax, the last PV after it). The V pipe (3,581) and FIX (3,165) are both
within 20% of that budget, so neither a cheaper vector path nor the cube alone would reach it:
the fp16-only P path (shift_f32=False: 3,056 V cycles per step, 525 fewer) gives a makespan of
130,641 (0.99x), its steady state 3,758 per step, the cube's FIX pushes then setting the pace.
What would settle the remaining 5%: the per-pipe busy ratios (msprof's vec / fixpipe / mte2 / cube
ratios) of pto-isa's kernel at this shape, or its logical S1 tile and softmax dtypes (the spec
gives neither). pto-isa's cost model also charges 1,000 cycles of cross-core sync per logical S1
tile; here the hand-offs are modelled as what they are on A2/A3 (a FIX or MTE3 DMA into a GM slot,
an MTE2 DMA out of it, and the flags between), not as a fixed charge.
"""

from __future__ import annotations

T = 128  # S1 columns of one cube piece: one QK^T matmul, one S push, one P push, one PV matmul
PIECES = 2  # cube pieces per softmax step: the logical S1 tile is PIECES x T = 256 keys
LOCAL_SLOTS = 3  # vector-side slots: the S pieces of one step and a PV tile
LOOKAHEAD = 2  # logical tiles the cube computes S ahead of the PV they precede
PV_CHUNK = 64  # keys per PV matmul: two chunks of L0A / L0B operands in flight
SHIFT_F32 = True  # S - m in f32 (then fp16 for exp), else all of P in fp16
STATS = ("m0", "m1", "mc", "rs", "l")  # per-row f32 statistics (m0 / m1: the running max, by step parity)
STATS16 = ("mc16", "rs16", "mn16")  # per-row f16 results of the f16 row reductions


def _mat(r: int, c: int) -> str:
    return f"!pto.tile_buf<mat, {r}x{c}xf16, blayout=col_major, slayout=row_major>"


def _left(r: int, c: int) -> str:
    return f"!pto.tile_buf<left, {r}x{c}xf16, slayout=row_major>"


def _right(r: int, c: int) -> str:
    return f"!pto.tile_buf<right, {r}x{c}xf16, slayout=col_major>"


def _acc(r: int, c: int) -> str:
    return f"!pto.tile_buf<acc, {r}x{c}xf32, blayout=col_major, slayout=row_major, fractal=1024>"


def _vec(r: int, c: int, dt: str = "f32") -> str:
    return f"!pto.tile_buf<vec, {r}x{c}x{dt}>"


def _col(r: int, dt: str = "f32") -> str:
    return (f"!pto.tile_buf<loc=vec, dtype={dt}, rows={r}, cols=1, v_row={r}, v_col=1, blayout=col_major, "
            f"slayout=none_box, fractal=512, pad=0>")


def workspace_elems(d: int = 128, s0: int = 128) -> int:
    """f32 elements of the GM workspace: 4 slots per direction of one S0 x max(T, d) f32 tile."""
    return 2 * 4 * s0 * max(T, d)


class _Flags:
    """set_flag / wait_flag lines for one resource each (an event id per (src, dst) pair and role),
    so a pipe waits for the one instruction it depends on, not for everything its producer issued."""

    @staticmethod
    def set(src: str, dst: str, eid: int) -> str:
        return f"pto.set_flag[<PIPE_{src}>, <PIPE_{dst}>, <EVENT_ID{eid}>]"

    @staticmethod
    def wait(src: str, dst: str, eid: int) -> str:
        return f"pto.wait_flag[<PIPE_{src}>, <PIPE_{dst}>, <EVENT_ID{eid}>]"


F = _Flags()
# cube event ids (8 per pipe pair on A2/A3): MTE2->MTE1 and MTE1->MTE2 one per L1 tile (K^T 0-1,
# V 2-3, by tile parity); M->MTE1 (operands read) and MTE1->M (operands ready) one per L0A / L0B
# buffer (K^T 0, PV chunk operands 1-2 by chunk parity); M->FIX and FIX->M one per accumulator
KT_FREE, PV_FREE = 0, 1
KT_READY, PV_READY = 0, 1
SACC_FREE, PVACC_FREE = 0, 1
KBUF, VBUF = 0, 2
PIPE_T = "!pto.pipe"


def flash_attention_kernel(s0: int = 128, s1: int = 8192, d: int = 128, lookahead: int | None = None,
                           local_slots: int | None = None, pieces: int | None = None,
                           shift_f32: bool | None = None) -> str:
    """The kernel text. ``pieces``: cube pieces of T keys per softmax step; ``lookahead``: logical
    tiles the cube computes S ahead of the PV they precede; ``local_slots``: vector-side slots of
    the pipe (both sides: the initialisations must agree)."""
    lookahead = LOOKAHEAD if lookahead is None else lookahead
    local_slots = LOCAL_SLOTS if local_slots is None else local_slots
    pieces = PIECES if pieces is None else pieces
    shift_f32 = SHIFT_F32 if shift_f32 is None else shift_f32
    step = pieces * T
    if (s1 % step or s0 % 32 or d % 16 or not 1 <= pieces <= 2 or lookahead < 1
            or local_slots < pieces):
        raise ValueError(f"flash attention {s0}x{s1}x{d}: S1 must be a multiple of {step} (pieces x {T}), S0 of 32, "
                         f"d of 16, pieces 1-2, lookahead >= 1, local slots >= pieces")
    n = s1 // step
    slot = s0 * max(T, d) * 4  # one unsplit S0 x T (or S0 x d) f32 tile
    ws = workspace_elems(d, s0)
    ws_t = f"!pto.partition_tensor_view<1x{ws}xf32>"

    def pipe_init(local: str, slots: int) -> list[str]:
        return ["%vws = pto.make_tensor_view %ws, shape = [%c1, %cws], strides = [%cws, %c1] : !pto.tensor_view<?x?xf32>",
                (f"%pws = pto.partition_view %vws, offsets = [%c0, %c0], sizes = [%c1, %cws] "
                 f": !pto.tensor_view<?x?xf32> -> {ws_t}"),
                (f"%p = pto.initialize_l2g2l_pipe {{dir_mask = 3, slot_size = {slot}, slot_num = 4, "
                 f"local_slot_num = {slots}, flag_base = 0}}(%pws, %{local} : {ws_t}, i32) -> {PIPE_T}")]

    consts = {"c0": 0, "c1": 1, "cd": d, "cs0": s0, "cs1": s1, "cT": T, "cws": ws, "chalf": s0 // 2}
    const_lines = [f"%{k} = arith.constant {v} : index" for k, v in consts.items()]
    head = (const_lines, pipe_init, slot)
    c = _cube(n, pieces, s0, d, lookahead, local_slots, head)
    v = _vector(n, pieces, s0, d, lookahead, local_slots, shift_f32, head)
    entry = [("func.func @flash_attention(%q: !pto.ptr<f16>, %k: !pto.ptr<f16>, %v: !pto.ptr<f16>, "
              "%out: !pto.ptr<f32>, %ws: !pto.ptr<f32>) attributes {pto.entry} {"),
             "func.call @fa_cube(%q, %k, %v, %ws) : (!pto.ptr<f16>, !pto.ptr<f16>, !pto.ptr<f16>, !pto.ptr<f32>) -> ()",
             "func.call @fa_vec(%out, %ws) : (!pto.ptr<f32>, !pto.ptr<f32>) -> ()",
             "return", "}"]
    body = "\n".join("  " + line for line in c + v + entry)
    return f'module attributes {{pto.target_arch = "a2"}} {{\n{body}\n}}\n'


def _steps(n: int, lookahead: int):
    """(i, S tile or None, PV tile or None) per step: S_i goes out ``lookahead`` tiles before PV_i."""
    for i in range(n + lookahead):
        yield i, (i if i < n else None), (i - lookahead if i >= lookahead else None)


class _Cube:
    """The AIC. Per step i: S = Q K^T for every piece of logical tile i (each pushed as it is done),
    the K^T load of tile i + 1 and the V load of tile i + 1 - lookahead, then PV of tile
    i - lookahead: each P piece popped, multiplied by its V piece and accumulated in L0C (tmatmul,
    then tmatmul.acc), the sum pushed once per logical tile. K^T and V are loaded a logical tile at
    a time (one DMA each: K [S1, d] rows are contiguous) into double-buffered L1 tiles and the
    pieces extracted to L0B; each L0 / L1 buffer is released by its own flag, so QK of one piece
    runs on M while FIX pushes another."""

    def __init__(self, n: int, pieces: int, s0: int, d: int) -> None:
        self.n, self.k, self.np = n, pieces, n * pieces
        w = pieces * T  # keys per logical tile
        self.q_m, self.kt_m, self.v_m, self.p_m = _mat(s0, d), _mat(d, w), _mat(w, d), _mat(s0, T)
        self.q_l, self.p_l, self.kt_r, self.v_r = _left(s0, d), _left(s0, PV_CHUNK), _right(d, T), _right(PV_CHUNK, d)
        self.s_acc, self.pv_acc = _acc(s0, T), _acc(s0, d)
        self.pkt, self.pv, self.pq = (f"!pto.partition_tensor_view<{d}x{w}xf16>",
                                      f"!pto.partition_tensor_view<{w}x{d}xf16>",
                                      f"!pto.partition_tensor_view<{s0}x{d}xf16>")

    def prologue(self, head: tuple, local_slots: int) -> list[str]:
        const_lines, pipe_init, slot = head
        c = ["func.func private @fa_cube(%q: !pto.ptr<f16>, %k: !pto.ptr<f16>, %v: !pto.ptr<f16>, %ws: !pto.ptr<f32>)",
             "    attributes {pto.kernel_kind = #pto.kernel_kind<cube>} {", *const_lines,
             f"%cw = arith.constant {self.k * T} : index",
             *(f"%x{k} = arith.constant {k * T} : index" for k in range(self.k)),
             *(f"%y{c} = arith.constant {c * PV_CHUNK} : index" for c in range(T // PV_CHUNK)),
             *(f"%z{c} = arith.constant {c * PV_CHUNK} : index" for c in range(self.k * T // PV_CHUNK)),
             (f"%local = pto.reserve_buffer {{name = \"fa_v2c\", size = {slot * local_slots}, "
              f"location = #pto.address_space<mat>, auto = true}} -> i32"), *pipe_init("local", local_slots),
             "%vq = pto.make_tensor_view %q, shape = [%cs0, %cd], strides = [%cd, %c1] : !pto.tensor_view<?x?xf16>",
             # K^T [d, S1] over K [S1, d]: column stride d; a window of whole columns is one contiguous block
             "%vkt = pto.make_tensor_view %k, shape = [%cd, %cs1], strides = [%c1, %cd] : !pto.tensor_view<?x?xf16>",
             "%vv = pto.make_tensor_view %v, shape = [%cs1, %cd], strides = [%cd, %c1] : !pto.tensor_view<?x?xf16>",
             (f"%pq = pto.partition_view %vq, offsets = [%c0, %c0], sizes = [%cs0, %cd] "
              f": !pto.tensor_view<?x?xf16> -> {self.pq}"),
             f"%qm = pto.alloc_tile : {self.q_m}", f"%ql = pto.alloc_tile : {self.q_l}",
             f"%ktr = pto.alloc_tile : {self.kt_r}", f"%sacc = pto.alloc_tile : {self.s_acc}",
             *(f"%pl{b} = pto.alloc_tile : {self.p_l}" for b in range(2)),
             *(f"%vr{b} = pto.alloc_tile : {self.v_r}" for b in range(2)),
             f"%pvacc = pto.alloc_tile : {self.pv_acc}",
             *(f"%ktm{b} = pto.alloc_tile : {self.kt_m}" for b in range(2)),
             *(f"%vm{b} = pto.alloc_tile : {self.v_m}" for b in range(2)),
             f"%pm = pto.declare_tile -> {self.p_m}"]
        for t in range(self.n):
            c += [f"%o{t} = arith.constant {t * self.k * T} : index",
                  (f"%pkt{t} = pto.partition_view %vkt, offsets = [%c0, %o{t}], sizes = [%cd, %cw] "
                   f": !pto.tensor_view<?x?xf16> -> {self.pkt}"),
                  (f"%pv{t} = pto.partition_view %vv, offsets = [%o{t}, %c0], sizes = [%cw, %cd] "
                   f": !pto.tensor_view<?x?xf16> -> {self.pv}")]
        return c

    def load_kt(self, t: int) -> list[str]:
        """K^T of logical tile t (and Q with the first) into L1, double-buffered by tile parity."""
        out = [F.wait("MTE1", "MTE2", KBUF + t % 2)] if t >= 2 else []  # K^T_{t-2} extracted
        out.append(f"pto.tload ins(%pkt{t} : {self.pkt}) outs(%ktm{t % 2} : {self.kt_m})")
        if t == 0:
            out.append(f"pto.tload ins(%pq : {self.pq}) outs(%qm : {self.q_m})")
        return [*out, F.set("MTE2", "MTE1", KBUF + t % 2)]

    def load_v(self, t: int) -> list[str]:
        """V of logical tile t into L1, one step before its PV, double-buffered by tile parity."""
        out = [F.wait("MTE1", "MTE2", VBUF + t % 2)] if t >= 2 else []  # V_{t-2} extracted
        return [*out, f"pto.tload ins(%pv{t} : {self.pv}) outs(%vm{t % 2} : {self.v_m})",
                F.set("MTE2", "MTE1", VBUF + t % 2)]

    def qk(self, p: int) -> list[str]:
        """S_p = Q K_p^T into L0C, pushed to the vector cores (each takes S0/2 rows)."""
        t, k = divmod(p, self.k)
        out = [F.wait("MTE2", "MTE1", KBUF + t % 2)] if k == 0 else []  # K^T_t loaded
        if p == 0:
            out.append(f"pto.tmov ins(%qm : {self.q_m}) outs(%ql : {self.q_l})")
        else:
            out.append(F.wait("M", "MTE1", KT_FREE))  # QK_{p-1} has read ktr
        out.append(f"pto.textract ins(%ktm{t % 2}, %c0, %x{k} : {self.kt_m}, index, index) outs(%ktr : {self.kt_r})")
        if k == self.k - 1 and t + 2 < self.n:
            out.append(F.set("MTE1", "MTE2", KBUF + t % 2))
        out += [F.set("MTE1", "M", KT_READY), F.wait("MTE1", "M", KT_READY)]
        if p > 0:
            out.append(F.wait("FIX", "M", SACC_FREE))  # S_{p-1} pushed out of sacc
        out.append(f"pto.tmatmul ins(%ql, %ktr : {self.q_l}, {self.kt_r}) outs(%sacc : {self.s_acc})")
        if p + 1 < self.np:
            out.append(F.set("M", "MTE1", KT_FREE))
        out += [F.set("M", "FIX", SACC_FREE), F.wait("M", "FIX", SACC_FREE),
                f"pto.tpush(%sacc, %p : {self.s_acc}, {PIPE_T}) {{split = 1}}"]
        if p + 1 < self.np:
            out.append(F.set("FIX", "M", SACC_FREE))
        return out

    def pv_piece(self, p: int) -> list[str]:
        """P_p (popped) times V_p in chunks of PV_CHUNK keys, accumulated in pvacc (each chunk's
        operands go to their own L0A / L0B buffer by chunk parity, so the extraction of one chunk
        runs beside the matmul of the other); pvacc is pushed after the last piece of its tile."""
        t, k = divmod(p, self.k)
        nc = T // PV_CHUNK
        out = [f"pto.tpop(%pm, %p : {self.p_m}, {PIPE_T}) {{split = 1}}"]
        if k == 0:
            out.append(F.wait("MTE2", "MTE1", VBUF + t % 2))  # V_t loaded
        for c in range(nc):
            q = p * nc + c  # chunk number over the run
            b = q % 2
            if q >= 2:
                out.append(F.wait("M", "MTE1", PV_FREE + b))  # the matmul of chunk q - 2 has read pl_b, vr_b
            out += [f"pto.textract ins(%pm, %c0, %y{c} : {self.p_m}, index, index) outs(%pl{b} : {self.p_l})",
                    (f"pto.textract ins(%vm{t % 2}, %z{k * nc + c}, %c0 : {self.v_m}, index, index) "
                     f"outs(%vr{b} : {self.v_r})")]
            if c == nc - 1:
                if k == self.k - 1 and t + 2 < self.n:
                    out.append(F.set("MTE1", "MTE2", VBUF + t % 2))
                out.append(f"pto.tfree(%p : {PIPE_T}) {{split = 1}}")
            out += [F.set("MTE1", "M", PV_READY + b), F.wait("MTE1", "M", PV_READY + b)]
            if k == c == 0 and t > 0:
                out.append(F.wait("FIX", "M", PVACC_FREE))  # PV of tile t-1 pushed out of pvacc
            if k == c == 0:
                out.append(f"pto.tmatmul ins(%pl{b}, %vr{b} : {self.p_l}, {self.v_r}) outs(%pvacc : {self.pv_acc})")
            else:
                out.append(f"pto.tmatmul.acc ins(%pvacc, %pl{b}, %vr{b} : {self.pv_acc}, {self.p_l}, {self.v_r}) "
                           f"outs(%pvacc : {self.pv_acc})")
            if q + 2 < self.np * nc:
                out.append(F.set("M", "MTE1", PV_FREE + b))
        if k == self.k - 1:
            out += [F.set("M", "FIX", PVACC_FREE), F.wait("M", "FIX", PVACC_FREE),
                    f"pto.tpush(%pvacc, %p : {self.pv_acc}, {PIPE_T}) {{split = 1}}"]
            if t + 1 < self.n:
                out.append(F.set("FIX", "M", PVACC_FREE))
        return out


def _cube(n: int, pieces: int, s0: int, d: int, lookahead: int, local_slots: int, head: tuple) -> list[str]:
    cube = _Cube(n, pieces, s0, d)
    c = [*cube.prologue(head, local_slots), *cube.load_kt(0)]
    for i, s_tile, pv_tile in _steps(n, lookahead):
        for k in range(pieces if s_tile is not None else 0):
            c += cube.qk(s_tile * pieces + k)
        if i + 1 < n:
            c += cube.load_kt(i + 1)
        if 0 <= i + 1 - lookahead < n:
            c += cube.load_v(i + 1 - lookahead)
        for k in range(pieces if pv_tile is not None else 0):
            c += cube.pv_piece(pv_tile * pieces + k)
    return [*c, "return", "}"]


def _vector(n: int, pieces: int, s0: int, d: int, lookahead: int, local_slots: int, shift_f32: bool,
            head: tuple) -> list[str]:
    """Each AIV (S0/2 rows): the online softmax of every logical tile as its S pieces arrive, the O
    update once per logical tile (its PV summed over the pieces by the cube)."""
    const_lines, pipe_init, slot = head
    half = s0 // 2
    nal = lookahead + 1  # alpha of tile j lives until PV_j arrives
    st, o_t, p16 = _vec(half, T), _vec(half, d), _vec(half, T, "f16")
    col, col16, row, row16 = _col(half), _col(half, "f16"), _vec(1, half), _vec(1, half, "f16")
    po = f"!pto.partition_tensor_view<{half}x{d}xf32>"
    scale = 1.0 / d ** 0.5
    bar = "pto.barrier <PIPE_V>"
    stats = (*STATS, *(f"al{b}" for b in range(nal)))
    ks = range(pieces)
    v = ["func.func private @fa_vec(%out: !pto.ptr<f32>, %ws: !pto.ptr<f32>)",
         "    attributes {pto.kernel_kind = #pto.kernel_kind<vector>} {", *const_lines,
         f"%scale = arith.constant {scale!r} : f32", "%zero = arith.constant 0.0 : f32",
         "%ninf = arith.constant -1.0e30 : f32",
         (f"%local = pto.reserve_buffer {{name = \"fa_c2v\", size = {slot // 2 * local_slots}, "
          f"location = #pto.address_space<vec>, auto = true}} -> i32"), *pipe_init("local", local_slots),
         "%sub64 = pto.get_subblock_idx", "%sub = arith.index_cast %sub64 : i64 to index",
         "%row = arith.muli %sub, %chalf : index",
         "%vo = pto.make_tensor_view %out, shape = [%cs0, %cd], strides = [%cd, %c1] : !pto.tensor_view<?x?xf32>",
         f"%po = pto.partition_view %vo, offsets = [%row, %c0], sizes = [%chalf, %cd] : !pto.tensor_view<?x?xf32> -> {po}",
         *(f"%s{k} = pto.declare_tile -> {st}" for k in ks), f"%pvh = pto.declare_tile -> {o_t}",
         f"%acc = pto.alloc_tile : {o_t}",
         *(f"%p16_{k} = pto.alloc_tile : {p16}" for k in ks),
         *([f"%t16 = pto.alloc_tile : {p16}"] if pieces > 1 else []),
         *(f"%{x} = pto.alloc_tile : {col}" for x in stats),
         *(f"%{x} = pto.alloc_tile : {col16}" for x in STATS16),
         # the per-row statistics as one row each: an op over them is one 256 B repeat, not one per row
         *(f"%{x}_r = pto.treshape %{x} : {col} -> {row}" for x in stats),
         *(f"%{x}_r = pto.treshape %{x} : {col16} -> {row16}" for x in STATS16),
         f"pto.texpands ins(%ninf : f32) outs(%m0 : {col})",
         f"pto.texpands ins(%zero : f32) outs(%l : {col})",
         f"pto.texpands ins(%zero : f32) outs(%acc : {o_t})",
         bar]

    def update(j: int) -> list[str]:
        """O = O alpha_j + PV_j (PV_j popped; its slot freed by the caller)."""
        return [f"pto.tpop(%pvh, %p : {o_t}, {PIPE_T}) {{split = 1}}",
                f"pto.trowexpandmul ins(%acc, %al{j % nal} : {o_t}, {col}) outs(%acc : {o_t})", bar,
                f"pto.tadd ins(%acc, %pvh : {o_t}, {o_t}) outs(%acc : {o_t})"]

    free = f"pto.tfree(%p : {PIPE_T}) {{split = 1}}"

    def softmax(j: int) -> list[str]:
        """m' = max(m, rowmax S) (taken on an fp16 copy of S: it is only the shift, any value near
        the max gives the same softmax), alpha = exp(scale (m - m')), P = exp(scale (S - m')),
        l = l alpha + rowsum(P) over the fp16 P the cube multiplies. ``shift_f32``: S - m' in f32,
        then fp16; else all of P in fp16 (S rounded to fp16 first)."""
        al, cur, new = f"%al{j % nal}", f"%m{j % 2}", f"%m{(j + 1) % 2}"
        out = [F.wait("MTE3", "V", k) for k in ks] if j >= 1 else []  # the previous P pieces pushed
        for k in ks:
            out += [f"pto.tpop(%s{k}, %p : {st}, {PIPE_T}) {{split = 1}}",
                    f"pto.tcvt ins(%s{k} : {st}) outs(%p16_{k} : {p16})"]
            if not shift_f32:
                out.append(free)
        out.append(bar)
        if pieces > 1:
            out += [f"pto.tmax ins(%p16_0, %p16_1 : {p16}, {p16}) outs(%t16 : {p16})", bar,
                    f"pto.trowmax ins(%t16 : {p16}) outs(%mc16 : {col16})", bar]
        else:
            out += [f"pto.trowmax ins(%p16_0 : {p16}) outs(%mc16 : {col16})", bar]
        out += [f"pto.tcvt ins(%mc16_r : {row16}) outs(%mc_r : {row})", bar,
                f"pto.tmax ins(%mc_r, {cur}_r : {row}, {row}) outs({new}_r : {row})", bar,
                f"pto.tsub ins({cur}_r, {new}_r : {row}, {row}) outs({al}_r : {row})"]
        if shift_f32:
            out += [*(f"pto.trowexpandsub ins(%s{k}, {new} : {st}, {col}) outs(%s{k} : {st})" for k in ks), bar,
                    f"pto.tmuls ins({al}_r, %scale : {row}, f32) outs({al}_r : {row})",
                    *(f"pto.tcvt ins(%s{k} : {st}) outs(%p16_{k} : {p16})" for k in ks), bar]
            out += [free for k in ks]  # the S pieces are read for the last time
        else:
            out += [f"pto.tcvt ins({new}_r : {row}) outs(%mn16_r : {row16})", bar,
                    f"pto.tmuls ins({al}_r, %scale : {row}, f32) outs({al}_r : {row})",
                    *(f"pto.trowexpandsub ins(%p16_{k}, %mn16 : {p16}, {col16}) outs(%p16_{k} : {p16})" for k in ks),
                    bar]
        out += [f"pto.texp ins({al}_r : {row}) outs({al}_r : {row})",
                *(f"pto.tmuls ins(%p16_{k}, %scale : {p16}, f32) outs(%p16_{k} : {p16})" for k in ks), bar,
                *(f"pto.texp ins(%p16_{k} : {p16}) outs(%p16_{k} : {p16})" for k in ks),
                f"pto.tmul ins(%l_r, {al}_r : {row}, {row}) outs(%l_r : {row})", bar]
        for k in ks:
            out += [F.set("V", "MTE3", k), F.wait("V", "MTE3", k), f"pto.tpush(%p16_{k}, %p : {p16}, {PIPE_T}) {{split = 1}}"]
            if j + 1 < n:
                out.append(F.set("MTE3", "V", k))
        if pieces > 1:
            out += [f"pto.tadd ins(%p16_0, %p16_1 : {p16}, {p16}) outs(%t16 : {p16})", bar,
                    f"pto.trowsum ins(%t16 : {p16}) outs(%rs16 : {col16})"]
        else:
            out.append(f"pto.trowsum ins(%p16_0 : {p16}) outs(%rs16 : {col16})")
        out += [bar, f"pto.tcvt ins(%rs16_r : {row16}) outs(%rs_r : {row})", bar,
                f"pto.tadd ins(%l_r, %rs_r : {row}, {row}) outs(%l_r : {row})"]
        return out

    for _, s_tile, pv_tile in _steps(n, lookahead):
        if s_tile is not None:
            v += softmax(s_tile)
        if pv_tile is not None:
            v += [*update(pv_tile), free]
    return [*v, bar, f"pto.trowexpanddiv ins(%acc, %l : {o_t}, {col}) outs(%acc : {o_t})",
            F.set("V", "MTE3", pieces), F.wait("V", "MTE3", pieces),
            f"pto.tstore ins(%acc : {o_t}) outs(%po : {po})",
            "return", "}"]


def reference(q, k, v):
    """NumPy flash attention (fp32 math on the fp16 inputs)."""
    import numpy as np

    q32, k32, v32 = (x.astype(np.float32) for x in (q, k, v))
    s = q32 @ k32.T / np.sqrt(q.shape[1])
    p = np.exp(s - s.max(axis=1, keepdims=True))
    return (p / p.sum(axis=1, keepdims=True)) @ v32
